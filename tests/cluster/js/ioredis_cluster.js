// ioredis's Cluster against the node on argv[2]: keys, a stream with a consumer group,
// a pipeline, pub/sub and Lua with keys in one slot. Prints one JSON line of results;
// tests/cluster/test_ioredis.py checks them.
"use strict";
const Redis = require("ioredis");

async function main() {
  const nodes = [{ host: "127.0.0.1", port: Number(process.argv[2]) }];
  const options = { slotsRefreshTimeout: 5000, redisOptions: { connectTimeout: 5000 } };
  const cluster = new Redis.Cluster(nodes, options);
  const out = {};

  const keys = Array.from({ length: 200 }, (_, n) => `key:${n}`);
  for (const key of keys) await cluster.set(key, key.toUpperCase());
  const got = await Promise.all(keys.map((key) => cluster.get(key)));
  out.keys = got.every((value, n) => value === keys[n].toUpperCase());
  out.masters = cluster.nodes("master").length;

  const stream = "orders:{s}";
  const ids = [];
  for (let n = 0; n < 5; n++) ids.push(await cluster.xadd(stream, "*", "n", String(n)));
  out.xgroup = await cluster.xgroup("CREATE", stream, "workers", "0");
  const read = await cluster.xreadgroup("GROUP", "workers", "c1", "COUNT", 3, "STREAMS", stream, ">");
  out.read = read[0][1].map((entry) => entry[0]).join(",") === ids.slice(0, 3).join(",");
  out.xack = await cluster.xack(stream, "workers", ids[0], ids[1]);
  out.pending = (await cluster.xpending(stream, "workers"))[0];

  const pipeline = cluster.pipeline();
  for (let n = 0; n < 50; n++) pipeline.incr(`{pipe}:counter:${n}`);
  const replies = await pipeline.exec();
  out.pipeline = replies.every(([error, value]) => error === null && value === 1) && replies.length;

  await cluster.set("{user:1}:name", "ann");
  out.lua = await cluster.eval(
    "redis.call('set', KEYS[1], ARGV[1]); return redis.call('get', KEYS[2])",
    2, "{user:1}:tmp", "{user:1}:name", "x");
  try {
    await cluster.eval("return 1", 2, "{user:1}:a", "{user:2}:b");
    out.crossslot = "no error";
  } catch (error) {
    out.crossslot = String(error.message);
  }

  // Pub/sub: a subscriber on one node, PUBLISH on every node in turn (the bus carries it).
  const subscriber = new Redis.Cluster(nodes, options);
  const messages = [];
  subscriber.on("message", (channel, message) => messages.push(`${channel}=${message}`));
  await subscriber.subscribe("news");
  for (const node of cluster.nodes("master")) await node.publish("news", `from-${node.options.port}`);
  const deadline = Date.now() + 10000;
  while (messages.length < out.masters && Date.now() < deadline) {
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  out.messages = messages.length;

  subscriber.disconnect();
  cluster.disconnect();
  console.log(JSON.stringify(out));
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
