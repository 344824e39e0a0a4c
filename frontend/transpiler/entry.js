// The one function chainrule's grader needs from sucrase: strip TypeScript types and turn ES module
// syntax into CommonJS, keeping every line on its original line number.
"use strict";
const { transform } = require("sucrase");
module.exports = { transform };
