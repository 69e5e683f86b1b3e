// Node's own CommonJS module: an ES import of node:http builds a namespace that reads its lazy
// WebSocket getter, which loads undici (~30 ms of every cold start).
module.exports = process.getBuiltinModule('node:http');
