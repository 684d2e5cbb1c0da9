// bench-article.mjs BASE_URL LEVELS [MAX_TOKENS] - the TPS article's
// "Stress Testing -- Measuring TPS Under Concurrent Load" method, written
// with the official openai SDK (the article's AsyncOpenAI + asyncio.gather
// becomes the same SDK's Node client + Promise.all): at each concurrency
// level, `concurrency` requests at once, each timing its content chunks
// with a monotonic clock.  The one addition: each chunk's arrival time is
// kept (performance.now(), ms), so `make bench` can measure this client's
// error against the mock provider's exact emission schedule; and the
// process's CPU time over the level (process.cpuUsage).
// Prints one JSON line per level:
//   {"concurrency", "cpu_us", "sys_us", "wall_ms", "median_tps", "p95_tps",
//    "requests": [{"start_ms", "arrivals_ms": [...], "tps", "error"}]}
import OpenAI from "openai";

const [baseURL, levelsArg, maxTokensArg] = process.argv.slice(2);
const levels = levelsArg.split(",").map(Number);
const maxTokens = Number(maxTokensArg ?? 200);
const client = new OpenAI({ baseURL, apiKey: "sk-not-a-real-key", maxRetries: 0 });

async function benchmarkTpsAsync(model, prompt) {
  const start = performance.now();
  let firstTokenTime = null;
  let tokenCount = 0;
  const arrivals = [];
  const stream = await client.chat.completions.create({
    model,
    messages: [{ role: "user", content: prompt }],
    max_tokens: maxTokens,
    stream: true,
  });
  for await (const chunk of stream) {
    if (chunk.choices[0].delta.content) {
      const now = performance.now();
      arrivals.push(now);
      if (firstTokenTime === null) firstTokenTime = now;
      tokenCount += 1;
    }
  }
  const end = performance.now();
  const decodeDuration = firstTokenTime !== null ? (end - firstTokenTime) / 1000 : 0;
  return {
    start_ms: start,
    arrivals_ms: arrivals,
    tps: decodeDuration > 0 ? tokenCount / decodeDuration : 0,
    error: null,
  };
}

async function runConcurrentBenchmark(concurrency, model, prompt) {
  const cpu0 = process.cpuUsage();
  const t0 = performance.now();
  const tasks = [];
  for (let i = 0; i < concurrency; i++)
    tasks.push(
      benchmarkTpsAsync(model, prompt).catch((e) => ({
        start_ms: 0,
        arrivals_ms: [],
        tps: 0,
        error: String(e),
      })),
    );
  const results = await Promise.all(tasks);
  const cpu = process.cpuUsage(cpu0);
  const tpsValues = results.map((r) => r.tps).filter((t) => t > 0).sort((a, b) => a - b);
  const p95Index = Math.max(0, Math.floor(tpsValues.length * 0.05));
  const mid = tpsValues.length >> 1;
  const median =
    tpsValues.length === 0
      ? 0
      : tpsValues.length % 2
        ? tpsValues[mid]
        : (tpsValues[mid - 1] + tpsValues[mid]) / 2;
  console.log(
    JSON.stringify({
      concurrency,
      cpu_us: cpu.user + cpu.system,
      sys_us: cpu.system,
      wall_ms: performance.now() - t0,
      median_tps: median,
      p95_tps: tpsValues.length ? tpsValues[p95Index] : 0,
      requests: results,
    }),
  );
}

for (const concurrency of levels) {
  await runConcurrentBenchmark(concurrency, "ttsbuf-mock", "Explain gradient descent in machine learning.");
}
