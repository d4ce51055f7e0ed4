// A receiver of knockwatch's signed webhook, with nothing but Node's standard library:
//
//   KNOCKWATCH_WEBHOOK_SECRET=... node docs/examples/webhook-receiver.mjs [PORT]
//
// It answers 204 to a notification whose signature is right and whose timestamp is at most five
// minutes old (or ahead), and 401 to anything else: a wrong or missing signature, a changed body,
// or a captured request replayed later (its timestamp is old, and the signature binds it). Within
// the five minutes the body's idempotencyKey drops a repeat (a retry, or a replay): 200, handled once.
// Test: notify/src/test/java/dev/knockwatch/notify/webhook/WebhookReceiverExampleTest.java.
import { createHmac, timingSafeEqual } from "node:crypto";
import { createServer } from "node:http";

const secret = process.env.KNOCKWATCH_WEBHOOK_SECRET;
if (!secret) {
  console.error("set KNOCKWATCH_WEBHOOK_SECRET");
  process.exit(2);
}
const TOLERANCE_SECONDS = 300;
const MAX_BODY_BYTES = 1 << 20;
const seen = new Map(); // Idempotency-Key -> when it was first handled (ms)

/** Why the request must be refused, or null when it is knockwatch's and fresh. */
export function refusal(headers, body, nowSeconds, key) {
  const timestamp = headers["x-knockwatch-timestamp"];
  const signature = headers["x-knockwatch-signature"];
  if (!/^[0-9]{1,12}$/.test(timestamp ?? "") || !/^v1=[0-9a-f]{64}$/.test(signature ?? "")) {
    return "no timestamp or signature";
  }
  const expected = "v1=" + createHmac("sha256", key).update(timestamp + ".").update(body).digest("hex");
  if (!timingSafeEqual(Buffer.from(expected), Buffer.from(signature))) {
    return "signature does not match";
  }
  if (Math.abs(nowSeconds - Number(timestamp)) > TOLERANCE_SECONDS) {
    return "timestamp " + timestamp + " is more than " + TOLERANCE_SECONDS + " s from now: a replay, or a clock off";
  }
  return null;
}

const server = createServer((req, res) => {
  const chunks = [];
  let size = 0;
  req.on("data", (c) => {
    size += c.length;
    if (size > MAX_BODY_BYTES) {
      res.writeHead(413).end();
      req.destroy();
      return;
    }
    chunks.push(c);
  });
  req.on("end", () => {
    if (res.writableEnded) {
      return;
    }
    const body = Buffer.concat(chunks);
    const now = Date.now();
    const why = refusal(req.headers, body, Math.floor(now / 1000), secret);
    if (why) {
      console.log("refused: " + why);
      res.writeHead(401, { "content-type": "text/plain" }).end(why + "\n");
      return;
    }
    for (const [k, at] of seen) {
      if (now - at > 2 * TOLERANCE_SECONDS * 1000) {
        seen.delete(k);
      }
    }
    const n = JSON.parse(body.toString("utf8"));
    // the body's key, not the Idempotency-Key header: the signature covers the body, not the headers
    const id = n.idempotencyKey;
    if (id && seen.has(id)) {
      console.log("repeat of " + id + ": already handled");
      res.writeHead(200).end();
      return;
    }
    if (id) {
      seen.set(id, now);
    }
    console.log("accepted " + n.event + " " + n.key + " (" + n.alerts.length + " alerts)");
    res.writeHead(204).end();
  });
});

const port = Number(process.argv[2] ?? 8090);
server.listen(port, "127.0.0.1", () => console.log("listening on 127.0.0.1:" + server.address().port));
