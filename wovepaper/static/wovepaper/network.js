// The co-author network on a researcher page: the researcher in the middle, the
// closest co-authors on a circle, a line for each pair who share papers (thicker
// for more). Data: GET <div data-url> (wovepaper.profile.coauthor_network).
// Names arrive as JSON text and are set with textContent, never as HTML.
(function () {
  "use strict";
  var box = document.getElementById("coauthor-network");
  if (!box) { return; }
  var NS = "http://www.w3.org/2000/svg";
  function el(name, attrs) {
    var node = document.createElementNS(NS, name);
    Object.keys(attrs).forEach(function (k) { node.setAttribute(k, attrs[k]); });
    return node;
  }
  function draw(data) {
    box.textContent = "";
    var others = data.nodes.filter(function (n) { return !n.centre; });
    if (!others.length) {
      var p = document.createElement("p");
      p.className = "muted";
      p.textContent = data.left_out
        ? "No co-authors with a profile on the papers of at most " + data.max_byline + " authors."
        : "No co-authors with a profile yet.";
      box.appendChild(p);
      return;
    }
    var size = 360, mid = size / 2, radius = 130, where = {};
    data.nodes.forEach(function (n) {
      if (n.centre) { where[n.id] = [mid, mid]; return; }
      var i = others.indexOf(n), angle = 2 * Math.PI * i / others.length - Math.PI / 2;
      where[n.id] = [mid + radius * Math.cos(angle), mid + radius * Math.sin(angle)];
    });
    var svg = el("svg", {viewBox: "-70 0 " + (size + 140) + " " + size, role: "img",
      "aria-label": "Co-author network of " + data.nodes[0].name});
    var most = Math.max.apply(null, data.links.map(function (l) { return l.papers; }).concat([1]));
    data.links.forEach(function (l) {
      var a = where[l.source], b = where[l.target];
      if (!a || !b) { return; }
      svg.appendChild(el("line", {x1: a[0], y1: a[1], x2: b[0], y2: b[1],
        stroke: "#9aa0a6", "stroke-width": 1 + 4 * l.papers / most, "class": "link"}));
    });
    data.nodes.forEach(function (n) {
      var xy = where[n.id], link = el("a", {href: n.url, "class": "node"});
      link.appendChild(el("circle", {cx: xy[0], cy: xy[1], r: n.centre ? 10 : 7,
        fill: n.centre ? "#0b57d0" : "#34a853"}));
      var label = el("text", {x: xy[0], y: xy[1] - 12, "text-anchor": "middle",
        "font-size": "11"});
      // A co-author's count is of shared papers; the centre's (all its papers)
      // is in its title, not on the label, which would read as shared.
      label.textContent = n.name + (!n.centre && n.papers ? " (" + n.papers + ")" : "");
      link.appendChild(label);
      var title = el("title", {});
      title.textContent = n.centre ? n.name + ": " + n.papers + " papers" : n.name + ": " + n.papers + " shared papers";
      link.appendChild(title);
      svg.appendChild(link);
    });
    box.appendChild(svg);
    var list = document.createElement("ul");
    list.className = "plain";
    others.forEach(function (n) {
      var li = document.createElement("li"), a = document.createElement("a");
      a.href = n.url;
      a.textContent = n.name;
      li.appendChild(a);
      li.appendChild(document.createTextNode(" (" + n.papers + " shared paper" + (n.papers === 1 ? "" : "s") + ")"));
      list.appendChild(li);
    });
    box.appendChild(list);
    box.setAttribute("data-drawn", String(data.nodes.length));
  }
  // Papers of large collaborations are left out by default; a switch under
  // the graph brings them in (?large=1) and leaves them out again.
  function switcher(data, large) {
    if (!large && !data.left_out) { return; }
    var p = document.createElement("p"), button = document.createElement("button");
    button.type = "button";
    button.className = "link";
    button.id = "network-large";
    button.textContent = large
      ? "Leave out papers of large collaborations"
      : "Include the " + data.left_out + " paper" + (data.left_out === 1 ? "" : "s") +
        " with over " + data.max_byline + " authors";
    button.addEventListener("click", function () { load(!large); });
    p.appendChild(button);
    box.appendChild(p);
  }
  function load(large) {
    var url = box.getAttribute("data-url") + (large ? "?large=1" : "");
    fetch(url, {headers: {Accept: "application/json"}})
      .then(function (r) { if (!r.ok) { throw new Error(r.status); } return r.json(); })
      .then(function (data) { draw(data); switcher(data, large); })
      .catch(function () { box.textContent = "The co-author network could not be loaded."; });
  }
  load(false);
})();
