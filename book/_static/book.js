/* The book's figures on paper (registered in _config.yml, sphinx.config.html_js_files; the print
 * rules themselves are in book.css).
 *
 * When the reader prints (Ctrl+P, or Chromium's print to PDF), each Plotly figure of the page
 * prints at its opening state (the step or menu entry it showed when the page opened, whatever
 * the reader has moved since), in the light theme, and no wider than the printed column; after
 * printing, the figure comes back as the reader left it. Plotly redraws synchronously inside the
 * "beforeprint" event, before the browser lays the page out for paper.
 */
(function () {
  "use strict";
  // The printed column: A4 (210 mm) or Letter (8.5 in) inside book.css's 15 mm page margins,
  // less the theme's print indent, in CSS px (96 per inch).
  var PRINT_WIDTH = 620;
  var saved = [];
  var theme = null;

  function copy(value) {
    return typeof structuredClone === "function" ? structuredClone(value) : JSON.parse(JSON.stringify(value));
  }

  function figures() {
    return Array.prototype.filter.call(document.querySelectorAll(".book-plotly-figure"), function (gd) {
      return gd.data && gd.layout && gd._fullLayout;
    });
  }

  // The opening state: what each figure shows once the page has loaded, before any reader input.
  function remember() {
    figures().forEach(function (gd) {
      if (!gd.__bookOpening) {
        try { gd.__bookOpening = {data: copy(gd.data), layout: copy(gd.layout)}; } catch (e) { /* left as is */ }
      }
    });
  }
  window.addEventListener("load", remember);

  // A link whose text is its address prints once (book.css prints other links' addresses).
  document.addEventListener("DOMContentLoaded", function () {
    document.querySelectorAll("a.reference.external").forEach(function (a) {
      var text = a.textContent.trim();
      if (text === a.getAttribute("href") || text === a.href) { a.classList.add("book-bare-url"); }
    });
  });

  window.addEventListener("beforeprint", function () {
    if (!window.Plotly) { return; }
    remember();
    saved = figures().map(function (gd) {
      var state = {gd: gd, data: gd.data, layout: gd.layout};
      var opening = gd.__bookOpening;
      if (opening) {
        var layout = copy(opening.layout);
        var width = gd.getBoundingClientRect().width;
        if (width > PRINT_WIDTH) { layout.width = PRINT_WIDTH; layout.autosize = false; }
        window.Plotly.react(gd, copy(opening.data), layout);
      }
      return state;
    });
    // Paper is white: print in the light theme (the figures follow the switch themselves).
    var root = document.documentElement;
    if (root.dataset.theme === "dark") {
      theme = {mode: root.dataset.mode, theme: root.dataset.theme};
      root.dataset.mode = "light";
      root.dataset.theme = "light";
    }
  });

  window.addEventListener("afterprint", function () {
    if (theme) {
      document.documentElement.dataset.mode = theme.mode;
      document.documentElement.dataset.theme = theme.theme;
      theme = null;
    }
    saved.forEach(function (state) { window.Plotly.react(state.gd, state.data, state.layout); });
    saved = [];
  });
})();
