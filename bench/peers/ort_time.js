// Times one ONNX model on onnxruntime's CPU execution provider: warm-up calls, then timed calls
// of the same inputs. Prints one JSON object: the wall and process-CPU seconds of each timed call.
// Usage: node ort_time.js MODULES_DIR MODEL.onnx THREADS RUNS D0,D1,...   (every input has that shape)
'use strict';
const path = require('path');
const [modules, model, threadsArg, runsArg, shapeArg] = process.argv.slice(2);
if (!shapeArg) {
  console.error('usage: node ort_time.js MODULES_DIR MODEL.onnx THREADS RUNS D0,D1,...');
  process.exit(2);
}
const ort = require(path.join(modules, 'onnxruntime-node'));

(async () => {
  const session = await ort.InferenceSession.create(model, {
    executionProviders: ['cpu'],
    intraOpNumThreads: Number(threadsArg),
    interOpNumThreads: 1,
    graphOptimizationLevel: 'all',
    // No spin-waiting between calls: its CPU time would be counted as work in the per-CPU-second
    // figures (the core's threads sleep when idle).
    extra: { session: { intra_op: { allow_spinning: '0' }, inter_op: { allow_spinning: '0' } } },
  });
  const shape = shapeArg.split(',').map(Number);
  const n = shape.reduce((a, b) => a * b, 1);
  // Inputs in [-2, 2): the same range as the core's benchmark (no denormals, no overflow).
  let seed = 20261126;
  const next = () => ((seed = (Math.imul(seed, 1664525) + 1013904223) >>> 0) / 2 ** 32) * 4 - 2;
  const feeds = {};
  for (const name of session.inputNames) feeds[name] = new ort.Tensor('float32', Float32Array.from({ length: n }, next), shape);
  await session.run(feeds);  // warm-up: allocations, thread pool start
  const calls = [];
  for (let r = 0; r < Number(runsArg); ++r) {
    const c0 = process.cpuUsage();
    const t0 = process.hrtime.bigint();
    const out = await session.run(feeds);
    const wall = Number(process.hrtime.bigint() - t0) * 1e-9;
    const c = process.cpuUsage(c0);
    const y = out[session.outputNames[0]].data;
    if (!Number.isFinite(y[0]) || !Number.isFinite(y[y.length - 1])) throw new Error('non-finite output');
    calls.push({ wall_s: wall, cpu_s: (c.user + c.system) * 1e-6 });
  }
  console.log(JSON.stringify({ model: path.basename(model), calls }));
})().catch((e) => {
  console.error(`ort_time.js: ${e.message}`);
  process.exit(1);
});
