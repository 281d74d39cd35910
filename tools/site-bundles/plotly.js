// plotly.js with the trace types the book draws (sitebuild.bundles.PLOTLY_TRACE_TYPES): scatter
// (in the core), bar, box and heatmap. Layout features (sliders, menus, frames, shapes, annotations)
// are in the core. Built by book/_ext/sitebuild/bundles.py with esbuild into _static/vendor/plotly/plotly.min.js.
var Plotly = require("plotly.js/lib/core");

Plotly.register([require("plotly.js/lib/bar"), require("plotly.js/lib/box"), require("plotly.js/lib/heatmap")]);

module.exports = Plotly;
