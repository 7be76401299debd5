// Keyboard shortcuts of a curator's review page: a key pressed outside a form
// field clicks the element whose data-key is that key (the page's buttons and
// links say which). A file, not an inline script: the Content-Security-Policy
// allows scripts from this site only.
document.addEventListener("keydown", function (e) {
  var t = e.target.tagName;
  if (e.ctrlKey || e.metaKey || e.altKey || t === "INPUT" || t === "SELECT" || t === "TEXTAREA") { return; }
  var el = /^[a-z]$/.test(e.key) && document.querySelector('[data-key="' + e.key + '"]');
  if (el) { e.preventDefault(); el.click(); }
});
