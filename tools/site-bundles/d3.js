// The part of d3 5.7.0 that BertViz's head_view.js and model_view.js call (d3.select, d3.hsl,
// d3.min, d3.scaleOrdinal, d3.schemeCategory10, d3.version), from the d3 modules d3 5.7.0 is made
// of; all of d3-selection, so that any selection method works. Built by book/_ext/sitebuild/bundles.py with
// esbuild into _static/vendor/d3/d3.min.js, which RequireJS loads as "d3" (an AMD module).
export * from "d3-selection";
export { hsl } from "d3-color";
export { min } from "d3-array";
export { scaleOrdinal } from "d3-scale";
export { schemeCategory10 } from "d3-scale-chromatic";
export const version = "5.7.0 (the part BertViz calls)";
