// Node's own CommonJS module, for the same reason as http.cjs.
module.exports = process.getBuiltinModule('node:https');
