// Render the maths of titles and abstracts with KaTeX (served with the site,
// no CDN). Each <span class="math" data-tex="..."> holds the Unicode reading
// the server wrote; it stays where KaTeX cannot read the source.
(function () {
  "use strict";
  if (typeof katex === "undefined") {
    return;
  }
  document.querySelectorAll("span.math[data-tex]").forEach(function (span) {
    try {
      katex.render(span.dataset.tex, span, {
        displayMode: span.dataset.display === "1",
        throwOnError: true,
        output: "htmlAndMathml",
      });
      span.classList.add("rendered");
    } catch (error) {
      span.classList.add("unrendered");
    }
  });
})();
