/* The book's own script, on every page (registered in _config.yml, sphinx.config.html_js_files).
 *
 * 1. Paper: the figures print at their opening state (the print rules themselves are in book.css).
 *    When the reader prints (Ctrl+P, or Chromium's print to PDF), each Plotly figure of the page
 *    prints at its opening state (the step or menu entry it showed when the page opened, whatever
 *    the reader has moved since), in the light theme, and no wider than the printed column; after
 *    printing, the figure comes back as the reader left it. Plotly redraws synchronously inside the
 *    "beforeprint" event, before the browser lays the page out for paper.
 * 2. Keyboard and screen readers (WCAG 2.1.1, 4.1.2): Plotly draws its sliders and menus in SVG,
 *    where they cannot be focused. Each slider becomes a focusable role="slider" (value, range and
 *    the step's label as its text) that the arrow keys, Home, End, Page Up and Page Down move
 *    through Plotly's own step mechanism (the slider's `active` and the step's method and args,
 *    what a click does); each menu's header and entries become focusable buttons that Enter and
 *    Space press (the same click Plotly listens for), the arrow keys move between the entries of
 *    an open dropdown and Escape closes it. A figure described by a sentence (helpers.viz's text
 *    alternative) hides its plot area's SVG from screen readers: the sentence stands in for it.
 *    The same pass names what the theme and third-party views leave unnamed (the sidebar's
 *    disclosure toggles, BertViz's layer menu, ipywidgets' slider handles), puts the primary
 *    sidebar in a landmark, gives the bibliography's entries their list role, and makes every
 *    region that scrolls focusable so that a keyboard can scroll it.
 * 3. The language switch keeps the reader's place: both editions give a section the same id (the
 *    English one, book/_ext/editions_zh.py), so the switch's link takes the section being read along,
 *    the address's anchor or, without one (or scrolled away from it), the section on screen (not to a
 *    page the other edition lacks, where it leads to that edition's home page).
 * The names this script gives (a slider's, a menu's, the sidebar's) are in the page's language.
 * Checked by tests/book/test_browser.py (print) and tests/book/test_accessibility.py (axe-core on
 * every page, the keyboard); the switch by tests/book/test_editions_site.py.
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

/* --- 2. Keyboard and screen readers --------------------------------------------------------- */
(function () {
  "use strict";
  var STEP_KEYS = {ArrowRight: 1, ArrowUp: 1, ArrowLeft: -1, ArrowDown: -1};
  // The names this script gives, in the page's language (the Chinese edition's pages are lang="zh-CN").
  var WORDS = /^zh/i.test(document.documentElement.lang || "") ? {
    book: "全书目录", thisChapter: "本章", step: "步骤", choice: "选项", slider: "滑块",
    sections: function (name) { return "“" + name + "”的各节"; },
    menu: function (current, count) { return "菜单：" + current + "（" + count + " 个选项）"; }
  } : {
    book: "Book", thisChapter: "this chapter", step: "Step", choice: "Choice", slider: "Slider",
    sections: function (name) { return "Sections of " + name; },
    menu: function (current, count) { return "Menu: " + current + " (" + count + " choices)"; }
  };
  var FOCUSABLE = "a[href], button, input, select, textarea, [tabindex]:not([tabindex='-1'])";

  function plain(text) {
    return String(text === undefined || text === null ? "" : text).replace(/<[^>]+>/g, " ").replace(/\s+/g, " ").trim();
  }
  function set(element, name, value) {
    value = String(value);
    if (element.getAttribute(name) !== value) { element.setAttribute(name, value); }
  }
  function title(gd) {
    var t = gd._fullLayout && gd._fullLayout.title;
    return plain(t && t.text);
  }

  // --- sliders ---
  function sliderOptions(group) { return group.__data__ || null; }  // Plotly binds the slider's full options

  function stepText(options, index) {
    var step = options.steps[index] || {}, current = options.currentvalue || {};
    var label = plain(step.label !== undefined ? step.label : step.value);
    return plain((current.prefix || "") + label + (current.suffix || ""));
  }

  function visibleSteps(options) {
    var visible = [];
    options.steps.forEach(function (step, i) { if (step.visible !== false) { visible.push(i); } });
    return visible;
  }

  function moveSlider(gd, group, key) {
    var options = sliderOptions(group);
    if (!options || !window.Plotly) { return false; }
    var index = options._index, visible = visibleSteps(options);
    var pending = gd.__bookSliderTarget && gd.__bookSliderTarget[index];
    var from = visible.indexOf(pending !== undefined ? pending : options.active);
    var page = Math.max(1, Math.round(visible.length / 10)), to;
    if (key in STEP_KEYS) { to = from + STEP_KEYS[key]; }
    else if (key === "PageUp") { to = from + page; }
    else if (key === "PageDown") { to = from - page; }
    else if (key === "Home") { to = 0; }
    else if (key === "End") { to = visible.length - 1; }
    else { return false; }
    to = Math.max(0, Math.min(visible.length - 1, to));
    if (to === from || from < 0 && to < 0) { return true; }
    var target = visible[to];
    gd.__bookSliderTarget = gd.__bookSliderTarget || {};
    gd.__bookSliderTarget[index] = target;
    // What a click on the rail does: the slider's `active`, then the step's own call (an animation
    // to a frame, or Plotly.update/restyle/relayout with the step's args).
    var update = {};
    update["sliders[" + index + "].active"] = target;
    gd.__bookQueue = (gd.__bookQueue || Promise.resolve()).then(function () {
      var step = gd.layout.sliders[index].steps[target];
      return window.Plotly.relayout(gd, update).then(function () {
        var method = step.method;
        if (method && method !== "skip" && step.execute !== false && typeof window.Plotly[method] === "function") {
          return window.Plotly[method].apply(null, [gd].concat(step.args || []));
        }
      });
    }).then(function () {
      if (gd.__bookSliderTarget[index] === target) { delete gd.__bookSliderTarget[index]; }
      enhance(gd);
    }, function () { delete gd.__bookSliderTarget[index]; });
    return true;
  }

  function enhanceSlider(gd, group) {
    var options = sliderOptions(group);
    if (!options || !options.steps || !options.steps.length) { return; }
    var prefix = plain(options.currentvalue && options.currentvalue.prefix).replace(/[\s:=：]+$/, "");
    set(group, "tabindex", "0");
    set(group, "role", "slider");
    set(group, "aria-label", prefix || title(gd) || WORDS.step);
    set(group, "aria-orientation", "horizontal");
    set(group, "aria-valuemin", 0);
    set(group, "aria-valuemax", options.steps.length - 1);
    set(group, "aria-valuenow", options.active || 0);
    set(group, "aria-valuetext", stepText(options, options.active || 0));
    if (!group.__bookKeys) {
      group.__bookKeys = true;
      group.addEventListener("keydown", function (event) {
        if (event.altKey || event.ctrlKey || event.metaKey) { return; }
        if (moveSlider(gd, group, event.key)) { event.preventDefault(); event.stopPropagation(); }
      });
    }
  }

  // --- menus (dropdowns and button rows) ---
  // Plotly draws each menu as a header group bound to the menu's options; a dropdown's entries go
  // into the one list of the figure's menus (its "updatemenu-active-index" says which menu is open),
  // a button row's entries into the header group itself.
  function click(element) {
    element.dispatchEvent(new MouseEvent("click", {bubbles: true, cancelable: true, view: window}));
  }
  function dropdownList(group) {
    var container = group.closest(".updatemenu-container");
    return container && container.querySelector(".updatemenu-dropdown-button-group");
  }
  function isOpen(group) {
    var list = dropdownList(group), options = group.__data__ || {};
    return !!list && list.getAttribute("updatemenu-active-index") === String(options._index);
  }
  function entries(group) {
    var options = group.__data__ || {};
    var holder = options.type === "buttons" ? group : (isOpen(group) ? dropdownList(group) : null);
    return holder ? Array.prototype.slice.call(holder.querySelectorAll(".updatemenu-dropdown-button, .updatemenu-button")) : [];
  }
  function focusEntry(group, wanted) {
    var list = entries(group);
    if (list.length) { list[Math.max(0, Math.min(list.length - 1, wanted))].focus(); }
  }
  function activeEntry(group) {
    var list = entries(group);
    var found = list.findIndex(function (entry) { return entry.getAttribute("aria-pressed") === "true"; });
    return Math.max(0, found);
  }

  function enhanceMenu(gd, group) {
    var options = group.__data__ || {}, count = (options.buttons || []).length;
    var header = group.querySelector(".updatemenu-header");
    if (header) {
      var current = header.querySelector(".updatemenu-item-text");
      set(header, "tabindex", "0");
      set(header, "role", "button");
      set(header, "aria-expanded", isOpen(group) ? "true" : "false");
      set(header, "aria-label", WORDS.menu(plain(current ? current.textContent : ""), count));
      if (!header.__bookKeys) {
        header.__bookKeys = true;
        header.addEventListener("keydown", function (event) {
          if (event.key !== "Enter" && event.key !== " " && event.key !== "ArrowDown") { return; }
          event.preventDefault();
          event.stopPropagation();
          if (!(event.key === "ArrowDown" && isOpen(group))) { click(header); }  // opens or folds the list
          enhance(gd);
          if (isOpen(group)) { focusEntry(group, activeEntry(group)); }
        });
      }
    }
    entries(group).forEach(function (entry, i) {
      var index = (options.buttons || []).indexOf(entry.__data__);  // Plotly binds each entry's options
      set(entry, "tabindex", "0");
      set(entry, "role", "button");
      set(entry, "aria-pressed", options.active === (index >= 0 ? index : i) ? "true" : "false");
      var text = entry.querySelector(".updatemenu-item-text");
      set(entry, "aria-label", plain(text ? text.textContent : ""));
      if (entry.__bookKeys) { return; }
      entry.__bookKeys = true;
      entry.addEventListener("keydown", function (event) {
        var list = entries(group), at = list.indexOf(entry);
        var moves = {ArrowDown: 1, ArrowRight: 1, ArrowUp: -1, ArrowLeft: -1};
        if (event.key === "Enter" || event.key === " ") {
          event.preventDefault();
          event.stopPropagation();
          click(entry);  // Plotly runs the entry's method with its args, and folds a dropdown
          enhance(gd);
          if (header) { header.focus(); }
        } else if (event.key in moves) {
          event.preventDefault();
          focusEntry(group, at + moves[event.key]);
        } else if (event.key === "Home" || event.key === "End") {
          event.preventDefault();
          focusEntry(group, event.key === "Home" ? 0 : list.length - 1);
        } else if (event.key === "Escape" && header) {
          event.preventDefault();
          click(header);  // folds the dropdown
          enhance(gd);
          header.focus();
        }
      });
    });
  }

  // --- a figure ---
  // A figure's title and its menus share the top margin, and Plotly keeps neither clear of the
  // other: where they meet, the title moves up to the top edge of the figure, on a row of its own,
  // and the plot (with its menus) moves down by the title's height.
  function overlap(a, b) {
    return Math.max(0, Math.min(a.right, b.right) - Math.max(a.left, b.left)) *
      Math.max(0, Math.min(a.bottom, b.bottom) - Math.max(a.top, b.top));
  }
  function clearTitle(gd) {
    var title = gd.querySelector(".gtitle"), menus = gd.querySelectorAll(".updatemenu-header");
    if (gd.__bookTitleMoved || !title || !title.textContent.trim() || !menus.length) { return; }
    var box = title.getBoundingClientRect();
    var clash = Array.prototype.some.call(menus, function (menu) {
      return overlap(box, menu.getBoundingClientRect()) > 4;
    });
    if (!clash) { return; }
    gd.__bookTitleMoved = true;
    // The title's new row: 8 px from the top, then its height and 6 px; the menus move down to below it.
    var top = gd.getBoundingClientRect().top;
    var menusTop = Math.min.apply(null, Array.prototype.map.call(menus, function (menu) {
      return menu.getBoundingClientRect().top - top;
    }));
    var layout = gd._fullLayout, rise = Math.max(4, Math.ceil(8 + box.height + 6 - menusTop));
    gd.style.height = (layout.height + rise) + "px";
    window.Plotly.relayout(gd, {"title.yref": "container", "title.y": 1, "title.yanchor": "top", "title.pad.t": 8,
                                "margin.t": layout.margin.t + rise, height: layout.height + rise});
  }

  // --- figures: text that would run off the figure or into its neighbours ---
  // Each figure's script (helpers.viz.renderer) calls fit(gd, spec) before Plotly draws it; what
  // still collides once drawn is moved apart by makeRoom (below).
  function setPath(target, path, value) {
    var keys = path.replace(/\[(\d+)\]/g, ".$1").split(".");
    for (var i = 0; i < keys.length - 1; i++) {
      if (target[keys[i]] === undefined) { target[keys[i]] = /^\d+$/.test(keys[i + 1]) ? [] : {}; }
      target = target[keys[i]];
    }
    target[keys[keys.length - 1]] = value;
  }
  // Chinese (the Chinese edition's figures, book/_ext/editions_figures.py) has no spaces to break at: a line
  // breaks before any CJK character (not before closing punctuation), and a CJK character counts as two
  // Latin ones.
  var CJK = /[\u2e80-\u9fff\uf900-\ufaff\u3000-\u303f\uff00-\uffef]/;
  var CJK_PIECES = /<[^>]+>|\s+|[\u2e80-\u9fff\uf900-\ufaff\u3000-\u303f\uff00-\uffef][）》」』】，。、；：！？]*|[^\s<\u2e80-\u9fff\uf900-\ufaff\u3000-\u303f\uff00-\uffef]+/g;
  function units(text) {
    var plain = String(text).replace(/<[^>]+>/g, ""), n = 0;
    for (var i = 0; i < plain.length; i++) { n += CJK.test(plain[i]) ? 2 : 1; }
    return n;
  }
  function wrapWords(text, width) {
    var lines = [], line = "";
    if (!CJK.test(String(text))) {
      String(text).split(" ").forEach(function (word) {
        if (line && (line + " " + word).replace(/<[^>]+>/g, "").length > width) { lines.push(line); line = word; }
        else { line = line ? line + " " + word : word; }
      });
      lines.push(line);
      return lines;
    }
    (String(text).match(CJK_PIECES) || []).forEach(function (piece) {
      if (/^\s+$/.test(piece)) { line += line ? " " : ""; return; }
      if (piece[0] !== "<" && line.trim() && units(line + piece) > width) { lines.push(line.trim()); line = piece; }
      else { line += piece; }
    });
    lines.push(line.trim());
    return lines;
  }
  function fit(gd, spec) {
    // Text that would run off the figure or into its neighbours is wrapped, at every width: the title
    // (beside the menu on a phone), the axes' titles to their axis, the panels' titles (annotations
    // without an arrow) to the room up to their neighbours. Narrow screens (phones) also get a smaller
    // title at the top, thinner colour bars, smaller margins and the legend under the plot. What
    // still collides once drawn is moved apart by makeRoom.
    var width = gd.getBoundingClientRect().width || document.documentElement.clientWidth;
    var layout = spec.layout, narrow = width < 600, menu = (layout.updatemenus || []).length > 0;
    var margin = layout.margin || {};
    var chars = Math.max(16, Math.floor((width - (narrow && menu ? 150 : 24)) / (narrow ? 7.5 : 8.5))), extra = 0;
    var titled = [layout].concat((spec.frames || []).map(function (f) { return f.layout; }));
    titled.forEach(function (l) {
      if (l && l.title && l.title.text) {
        var lines = wrapWords(l.title.text, chars);
        extra = Math.max(extra, lines.length - 1);
        l.title.text = lines.join("<br>");
      }
    });
    if (narrow) {
      setPath(layout, "title.font.size", 13);
      ["yref", "y", "yanchor", "pad.t"].forEach(function (key, i) {
        setPath(layout, "title." + key, ["container", 1, "top", 16][i]);
      });
      layout.margin = {l: 44, r: 6, b: margin.b === undefined ? 48 : margin.b, t: (margin.t || 64) + 20 * extra};
    } else if (extra) {
      layout.margin = Object.assign({}, margin, {t: (margin.t === undefined ? 64 : margin.t) + 20 * extra});
    }
    layout.height = (layout.height || 450) + 20 * extra;
    if (narrow || extra) { gd.style.height = layout.height + "px"; }
    var m = layout.margin || {}, plotWidth = width - (m.l === undefined ? 80 : m.l) - (m.r === undefined ? 80 : m.r);
    var plotHeight = layout.height - (m.t === undefined ? 100 : m.t) - (m.b === undefined ? 80 : m.b);
    // The axes' titles: as many lines as their axis needs (about 9 px a character, room to spare).
    Object.keys(layout).forEach(function (key) {
      var axis = layout[key], title = /^[xy]axis\d*$/.test(key) && axis && axis.title;
      var text = title && (typeof title === "string" ? title : title.text);
      if (!text) { return; }
      var domain = axis.domain || [0, 1], along = (key[0] === "x" ? plotWidth : plotHeight) * (domain[1] - domain[0]);
      var lines = wrapWords(text, Math.max(10, Math.floor(along / 9)));
      if (lines.length > 1) {
        axis.title = typeof title === "string" ? {} : title;
        axis.title.text = lines.join("<br>");
        axis.automargin = true;
      }
    });
    // The panels' titles and other free text (annotations without an arrow, on the paper or on a
    // panel's domain): wrapped to the room up to their neighbours on the same row.
    var span = function (ref) {  // the part of the plot's width that x = 0..1 spans: the paper, or an axis' domain
      if (ref === "paper") { return 1; }
      var axis = layout[ref.split(" ")[0].replace(/^x(\d*)$/, "xaxis$1")], domain = (axis && axis.domain) || [0, 1];
      return domain[1] - domain[0];
    };
    var notes = (layout.annotations || []).filter(function (a) {
      return a && a.text && a.showarrow === false && /^(paper|x\d* domain)$/.test(a.xref || "")
        && /^(paper|y\d* domain)$/.test(a.yref || "");
    });
    notes.forEach(function (a) {
      var x = a.x === undefined ? 0.5 : a.x, room = a.xanchor === "left" ? 1 - x : a.xanchor === "right" ? x
        : 2 * Math.min(x, 1 - x);
      notes.forEach(function (b) {
        if (b !== a && b.xref === a.xref && b.yref === a.yref && Math.abs((b.y || 0) - (a.y || 0)) < 0.05) {
          room = Math.min(room, Math.abs((b.x || 0) - x));
        }
      });
      var size = narrow ? 11 : (a.font && a.font.size) || 13;
      var roomPx = Math.max(room, 0.1) * span(a.xref) * plotWidth;
      var lines = wrapWords(a.text, Math.max(8, Math.floor(roomPx / (size * 0.6))));
      a.text = lines.join("<br>");
      if (narrow) { setPath(a, "font.size", 11); }
    });
    if (narrow) {
      // The legend: under the plot, across the width, each name wrapped to the width; the figure grows
      // by the legend's height (estimated here, measured once drawn: book.js), so that Plotly neither
      // shrinks the plot nor gives the legend a scroll bar.
      var named = spec.data.filter(function (t) {  // (heatmaps and images are not in a legend unless asked)
        return t.name && (t.showlegend === true || (t.showlegend !== false
          && !/^(heatmap|contour|image|histogram2d|histogram2dcontour)$/.test(t.type || "scatter")));
      });
      if (layout.showlegend !== false && (named.length > 1 || layout.showlegend === true)) {
        var perLine = Math.floor((width - 48) / 7.5), rows = 0, rowWidth = width, rowLines = 0;
        named.forEach(function (t) {
          var lines = wrapWords(t.name, perLine);
          t.name = lines.join("<br>");
          var entry = 40 + 7.5 * Math.max.apply(null, lines.map(function (l) {
            return l.replace(/<[^>]+>/g, "").length;
          }));
          if (rowWidth + entry > width) { rows += rowLines; rowWidth = 0; rowLines = 0; }
          rowWidth += entry; rowLines = Math.max(rowLines, lines.length);
        });
        var legendHeight = 19 * (rows + rowLines) + 12;
        layout.legend = Object.assign(layout.legend || {}, {orientation: "h", xref: "container", x: 0, xanchor: "left",
                                                           yref: "container", y: 0, yanchor: "bottom"});
        layout.margin.b += legendHeight;
        layout.height += legendHeight;
        gd.style.height = layout.height + "px";
        gd.__bookLegendBelow = true;
      }
      var bars = [layout.coloraxis && layout.coloraxis.colorbar]
        .concat(spec.data.map(function (t) { return t.colorbar; }));
      bars.forEach(function (bar) {
        if (bar) { bar.thickness = 8; setPath(bar, "title.side", "top"); setPath(bar, "title.font.size", 11); }
      });
      // Token axes: upright labels, all of them, in a smaller font; the axis title gives way.
      var x = layout.xaxis || {}, y = layout.yaxis || {};
      if (x.type === "category" && y.type === "category" && spec.data.length && spec.data[0].x) {
        var longest = Math.max.apply(null, spec.data[0].x.map(function (t) { return String(t).length; }));
        x.tickangle = -90; setPath(x, "tickfont.size", 10); setPath(y, "tickfont.size", 10);
        y.title = {text: ""};
        (layout.sliders || []).forEach(function (s) { setPath(s, "pad.t", Math.round(longest * 6) + 44); });
      }
    }
  }

  // Plotly places a figure's title, legend, menus and panel titles where the figure says, whether or
  // not they then overlap (a long title over a legend above the plot; on a phone, where the renderer
  // wraps the titles and puts the legend under the plot, helpers.viz.renderer, more so). Each pass
  // measures what collides, and moves the plot, a menu or the legend by what it takes: a menu over
  // the panels' titles, the figure's title over what is under it, a legend under the plot over an
  // axis' title or a slider (four passes at most: a relayout redraws).
  function makeRoom(gd) {
    if ((gd.__bookRoomPasses || 0) >= 4 || !gd._fullLayout) { gd.__bookRoomSettled = true; return; }
    gd.__bookRoomPasses = (gd.__bookRoomPasses || 0) + 1;
    var layout = gd._fullLayout, update = {}, grow = 0;
    var boxes = function (selector) {
      return Array.prototype.map.call(gd.querySelectorAll(selector), function (e) {
        return e.getBoundingClientRect();
      }).filter(function (r) { return r.width > 0 && r.height > 0; });
    };
    var clash = function (a, b) { return overlap(a, b) > 4; };
    var notes = boxes(".annotation");
    // 1. A menu and the panels' titles or an axis' title: a menu above the plot goes up, one under it
    // down, and the plot makes room.
    var plots = boxes(".bglayer .bg");
    var plotTop = plots.length ? Math.min.apply(null, plots.map(function (r) { return r.top; })) : -Infinity;
    var plotBottom = plots.length ? Math.max.apply(null, plots.map(function (r) { return r.bottom; })) : Infinity;
    var texts = notes.concat(boxes(".g-xtitle, .g-x2title, .g-x3title"));
    var menuRise = 0, menuDrop = 0;
    Array.prototype.forEach.call(gd.querySelectorAll(".updatemenu-container .updatemenu-header"), function (menu) {
      var m = menu.getBoundingClientRect(), hit = texts.filter(function (n) { return clash(m, n); });
      if (!hit.length) { return; }
      if (m.bottom <= plotTop + 4) {
        var top = Math.min.apply(null, hit.map(function (n) { return n.top; }));
        menuRise = Math.max(menuRise, Math.ceil(m.bottom + 4 - top));
      } else if (m.top >= plotBottom - 4) {
        var bottom = Math.max.apply(null, hit.map(function (n) { return n.bottom; }));
        menuDrop = Math.max(menuDrop, Math.ceil(bottom + 4 - m.top));
      }
    });
    if (menuRise > 0 || menuDrop > 0) {
      (layout.updatemenus || []).forEach(function (menu, i) {
        if (menu.y >= 1 && menuRise > 0) { update["updatemenus[" + i + "].y"] = menu.y + menuRise / layout._size.h; }
        if (menu.y <= 0 && menuDrop > 0) { update["updatemenus[" + i + "].y"] = menu.y - menuDrop / layout._size.h; }
      });
      if (menuRise > 0) { update["margin.t"] = layout._size.t + menuRise; grow += menuRise; }
      if (menuDrop > 0) { update["margin.b"] = layout._size.b + menuDrop; grow += menuDrop; }
    } else {
      // 2. The figure's title and what is under it: the plot goes down.
      var title = boxes(".gtitle")[0];
      if (title) {
        var below = boxes(".annotation, .bglayer .bg, .updatemenu-header, .g-xtitle, .g-ytitle, .g-y2title")
          .concat(gd.__bookLegendBelow ? [] : boxes(".legend"))
          .filter(function (r) { return r.bottom > title.top + 2; });
        if (below.length) {
          var rise = Math.ceil(title.bottom + 6 - Math.min.apply(null, below.map(function (r) { return r.top; })));
          if (rise > 0) {  // the title to the top of the figure, the plot down
            update["margin.t"] = layout._size.t + rise;
            grow += rise;
            Object.assign(update, {"title.yref": "container", "title.y": 1, "title.yanchor": "top",
                                   "title.pad.t": 8});
          }
        }
      }
    }
    // 3. A legend under the plot and what is above it (tick labels, axis titles, sliders): the legend
    // goes down. (The margins set are the ones Plotly drew, which it may have widened: autoexpand.)
    var legend = boxes(".legend")[0];
    if (legend && (gd.__bookLegendBelow || legend.top >= plotBottom - 2)) {
      var above = boxes("g[class*='tick'] > text, .g-xtitle, .g-x2title, .g-x3title, .slider-group, .annotation")
        .filter(function (r) { return r.top < legend.bottom && r.bottom > plotBottom - 2; });
      var lowest = above.length ? Math.max.apply(null, above.map(function (r) { return r.bottom; })) : legend.top - 8;
      var drop = Math.ceil(lowest + 8 - legend.top);
      if (drop > 0) {
        if (!gd.__bookLegendBelow && layout.legend.yref !== "container") {
          update["legend.y"] = layout.legend.y - drop / layout._size.h;
        }
        update["margin.b"] = (update["margin.b"] || layout._size.b) + drop;
        grow += drop;
      }
    }
    if (!Object.keys(update).length) { gd.__bookRoomSettled = true; return; }
    update.height = layout.height + grow;
    gd.style.height = update.height + "px";
    window.Plotly.relayout(gd, update).then(function () { makeRoom(gd); });
  }

  function enhance(gd) {
    if (!gd || !gd._fullLayout) { return; }
    var wrapper = gd.closest(".book-plotly");
    if (wrapper && wrapper.getAttribute("aria-describedby")) {
      // The plot area (axes, traces) and the hover layer hold nothing to operate: the sentence
      // of the text alternative stands in for them. The controls' layer stays exposed.
      gd.querySelectorAll("svg.main-svg").forEach(function (svg) {
        if (!svg.querySelector(".slider-group, .updatemenu-container, .legend") && !svg.querySelector(FOCUSABLE)) {
          set(svg, "aria-hidden", "true");
        }
      });
    }
    gd.querySelectorAll(".slider-group").forEach(function (group) { enhanceSlider(gd, group); });
    gd.querySelectorAll(".updatemenu-header-group").forEach(function (group) { enhanceMenu(gd, group); });
    clearTitle(gd);
    makeRoom(gd);
    if (!gd.__bookEvents && typeof gd.on === "function") {
      gd.__bookEvents = true;
      ["plotly_afterplot", "plotly_sliderchange", "plotly_animated", "plotly_buttonclicked", "plotly_relayout"]
        .forEach(function (name) { gd.on(name, function () { schedule(); }); });
    }
  }

  // --- what the theme and third-party views leave unnamed ---
  function fixPage() {
    // The primary sidebar (the book's title, the search button, the table of contents) is in no
    // landmark: a navigation landmark of its own, so that all of the page is in one.
    var sidebar = document.getElementById("pst-primary-sidebar");
    if (sidebar && !sidebar.getAttribute("role")) {
      set(sidebar, "role", "navigation");
      set(sidebar, "aria-label", WORDS.book);
    }
    // The sidebar's disclosure toggles (an icon only): named after the chapter they open.
    document.querySelectorAll(".bd-sidebar details > summary, .bd-sidenav details > summary").forEach(function (summary) {
      if (plain(summary.textContent) || summary.getAttribute("aria-label")) { return; }
      var item = summary.closest("li"), link = item && item.querySelector(":scope > a");
      set(summary, "aria-label", WORDS.sections(link ? plain(link.textContent) : WORDS.thisChapter));
    });
    // docutils' citation list: its entries carry the deprecated role doc-biblioentry, not allowed
    // on a div, so the list appears to hold links, not items.
    document.querySelectorAll("[role='list'] > .citation[role='doc-biblioentry']").forEach(function (entry) {
      set(entry, "role", "listitem");
    });
    // Sphinx's module index nests a <ul> right inside a <ul>: into the item it belongs to.
    document.querySelectorAll(".bd-article ul > ul").forEach(function (list) {
      var item = list.previousElementSibling;
      if (item && item.tagName === "LI") { item.appendChild(list); }
    });
    // Menus of third-party views (BertViz's "Layer:" select) named by the text before them.
    document.querySelectorAll(".bd-article select:not([aria-label]):not([aria-labelledby])").forEach(function (select) {
      if (select.labels && select.labels.length) { return; }
      var before = select.previousSibling;
      var text = before && before.nodeType === 3 ? plain(before.textContent).replace(/[:：]$/, "") : "";
      set(select, "aria-label", text || plain(select.id || select.name) || WORDS.choice);
    });
    // ipywidgets' sliders: the handle (role="slider") named by its widget's label.
    document.querySelectorAll(".widget-slider [role='slider']:not([aria-label]):not([aria-labelledby])").forEach(function (handle) {
      var widget = handle.closest(".widget-slider"), label = widget && widget.querySelector(".widget-label");
      set(handle, "aria-label", (label && plain(label.textContent)) || WORDS.slider);
    });
    document.querySelectorAll(".book-plotly-figure").forEach(enhance);
  }

  // Regions that scroll (wide tables, code, math, BertViz views) take the keyboard's focus so that
  // the arrow keys can scroll them, unless something inside can (WCAG 2.1.1).
  var SCROLLERS = ".bd-article :is(pre, table, div.cell_output, .pst-scrollable-table-container, div.math, " +
    "mjx-container[display='true'], .book-bertviz, .output)";
  function fixScrollers() {
    document.querySelectorAll(SCROLLERS).forEach(function (element) {
      if (element.hasAttribute("tabindex") && !element.__bookScroller) { return; }  // the theme's own choice
      var style = getComputedStyle(element);
      var scrolls = (/auto|scroll/.test(style.overflowX) && element.scrollWidth > element.clientWidth + 1) ||
        (/auto|scroll/.test(style.overflowY) && element.scrollHeight > element.clientHeight + 1);
      var reachable = scrolls && element.querySelector(FOCUSABLE);
      if (scrolls && !reachable) {
        element.__bookScroller = true;
        set(element, "tabindex", "0");
      } else if (element.__bookScroller) {
        element.removeAttribute("tabindex");
        element.__bookScroller = false;
      }
    });
  }

  // One pass per animation frame at most; the scroll check (it reads the layout) at most twice a
  // second, and once more after the last change.
  var scheduled = false, scrollTimer = null;
  function schedule() {
    if (scheduled) { return; }
    scheduled = true;
    window.requestAnimationFrame(function () {
      scheduled = false;
      fixPage();
      if (scrollTimer === null) {
        scrollTimer = setTimeout(function () { scrollTimer = null; fixScrollers(); }, 500);
      }
    });
  }

  // 3. The language switch takes the reader's section along: the section in the address (#...) while it is
  // on screen, else the section being read, the last whose heading has scrolled past the reading line
  // (a quarter of the way down the window) and whose id both editions share (not an id docutils made up,
  // id5, which differs between them). Set on every way of following the link: a click, a middle click,
  // the keyboard, the context menu's "open in new tab" or "copy link".
  var READING_LINE = 0.25;
  function onScreen(element) {
    var box = element.getBoundingClientRect();
    return box.bottom > 0 && box.top < window.innerHeight;
  }
  function headingOf(element) {
    return element.querySelector(":scope > h1, :scope > h2, :scope > h3, :scope > h4, :scope > h5, :scope > h6")
      || element;
  }
  function currentSection() {
    var hash = window.location.hash, target = null;
    try { target = hash.length > 1 ? document.getElementById(decodeURIComponent(hash.slice(1))) : null; }
    catch (e) { target = null; }
    var sections = document.querySelectorAll(".bd-article section[id]");
    if (target && onScreen(headingOf(target))) { return hash; }
    var line = window.innerHeight * READING_LINE, found = "";
    Array.prototype.forEach.call(sections, function (section) {
      if (/^id\d+$/.test(section.id)) { return; }
      if (headingOf(section).getBoundingClientRect().top <= line) { found = "#" + encodeURIComponent(section.id); }
    });
    var first = sections.length ? sections[0] : null;  // the page's own title: no anchor (the page's top)
    return first && found === "#" + encodeURIComponent(first.id) ? "" : found;
  }
  function carrySection(event) {
    var link = event.target.closest ? event.target.closest("a.edition-switch") : null;
    if (!link || link.getAttribute("data-edition-missing") === "true") { return; }
    link.setAttribute("href", link.getAttribute("href").split("#")[0] + currentSection());
  }
  ["click", "auxclick", "contextmenu", "pointerdown", "focusin", "keydown"].forEach(function (name) {
    document.addEventListener(name, carrySection, true);
  });

  window.bookFigures = {enhance: enhance, moveSlider: moveSlider, fit: fit};
  document.addEventListener("DOMContentLoaded", function () {
    schedule();
    // Views drawn later (widgets, BertViz, Plotly's redraws) are named as they appear.
    new MutationObserver(schedule).observe(document.body, {childList: true, subtree: true});
  });
  window.addEventListener("load", function () { schedule(); fixScrollers(); });
  window.addEventListener("resize", schedule);
})();
