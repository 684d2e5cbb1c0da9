// A third-party WebSocket TTS peer for tests/test_ttsws.c, on the npm `ws`
// package: it speaks ElevenLabs' stream-input or Cartesia's contexts
// protocol (as their API references describe them; see
// tests/data/ttsapi/elevenlabs-ws.json and cartesia-ws.json) with a
// synthetic PCM tone, answering each chunk after LAT ms, or one of the
// faults the client must read.
//
//   node tts-ws-peer.mjs PORT DIALECT MODE LOGFILE
//   PORT     0: any free port, written to LOGFILE.port once it listens
//   DIALECT  elevenlabs | cartesia
//   MODE     ok | refuse | binary | badjson | cut | error | close (ends the
//            connection, 1000 "inactivity", 20 ms after the first chunk's audio)
//            and the hostile ones:
//            empty    each chunk's end marker (flush_done; ElevenLabs:
//                     isFinal) with no audio before it
//            flood    audio sent from the upgrade on, every 20 ms, before
//                     and between the chunks' texts
//            trailing one more audio message after each chunk's end
//                     marker (Cartesia: with that chunk's flush_id)
//            badutf8  chunk 2 answered by an error whose text holds bytes
//                     that are not UTF-8 (a raw text frame)
// The key the client should send is in PEER_KEY (never written to the
// log: the log says whether it came, and where).  Listens on 127.0.0.1.
// Each chunk's first audio is logged as {"first_audio_ms": D,
// "loop_lag_ms": L}: D the peer's own time from the chunk's text
// (Cartesia: its flush) reaching its handler to that audio's send, LAT
// plus however late node's timer fired; L the most node's event loop has
// been late so far (perf_hooks), which bounds how long a message waited
// in its socket before the handler ran.  A test judges the client's first
// byte against what the peer did.
import http from 'node:http';
import fs from 'node:fs';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { WebSocketServer } from 'ws';

const [port, dialect, mode, logfile] = process.argv.slice(2);
const LAT = 40; // ms from a chunk's text (Cartesia: its flush) to its first audio
const BYTES = 1600; // PCM bytes per audio message, two per chunk
const key = process.env.PEER_KEY || '';
const log = (o) => fs.appendFileSync(logfile, JSON.stringify(o) + '\n');
const loopLag = monitorEventLoopDelay({ resolution: 1 });
loopLag.enable();
const pcm = () => {
  const b = Buffer.alloc(BYTES);
  for (let i = 0; i < BYTES / 2; i++) b.writeInt16LE(Math.round(8000 * Math.sin(i / 8)), i * 2);
  return b.toString('base64');
};

const server = http.createServer((req, res) => {
  res.writeHead(404);
  res.end();
});
const wss = new WebSocketServer({ noServer: true });

server.on('upgrade', (req, socket, head) => {
  const hdr = dialect === 'elevenlabs' ? 'xi-api-key' : 'x-api-key';
  log({
    url: req.url,
    key_ok: req.headers[hdr] === key,
    key_in_url: key !== '' && req.url.includes(key),
    version: req.headers['cartesia-version'] || null,
  });
  if (mode === 'refuse') {
    const body = JSON.stringify({ detail: { status: 'invalid_api_key', message: 'Invalid API key' } });
    socket.end(
      'HTTP/1.1 401 Unauthorized\r\nContent-Type: application/json\r\n' +
        `Content-Length: ${body.length}\r\nConnection: close\r\n\r\n${body}`,
    );
    return;
  }
  wss.handleUpgrade(req, socket, head, (ws) => {
    if (mode === 'flood') {
      const shape = dialect === 'elevenlabs'
        ? () => JSON.stringify({ audio: pcm(), isFinal: null, alignment: null })
        : () => JSON.stringify({ type: 'chunk', data: pcm(), done: false, status_code: 206 });
      const t = setInterval(() => ws.readyState === 1 && ws.send(shape()), 20);
      ws.on('close', () => clearInterval(t));
      ws.send(shape());
    }
    session(ws);
  });
});

function session(ws) {
  let flushId = 0;
  let pending = Promise.resolve(); // the audio still to come: the end waits for it
  let text = '';
  ws.on('message', (data, isBinary) => {
    const t0 = performance.now();
    const raw = data.toString();
    if (key !== '' && raw.includes(key)) log({ key_in_message: true });
    let m;
    try {
      m = JSON.parse(raw);
    } catch {
      log({ bad: raw.slice(0, 80), binary: isBinary });
      return;
    }
    log({ msg: m });
    if (dialect === 'elevenlabs') {
      if (m.text === '') {
        pending.then(() => ws.send(JSON.stringify({ audio: null, isFinal: true })));
        return;
      }
      if (m.text.trim() === '') return; // the opening space
      pending = answer(ws, t0, m.text, (a, chars) =>
        JSON.stringify({ audio: a, isFinal: null, alignment: { chars, charStartTimesMs: [], charDurationsMs: [] } }),
      );
    } else {
      if (m.flush === true) {
        flushId++;
        const id = flushId;
        const t = text;
        text = '';
        pending = answer(ws, t0, t, (a) => JSON.stringify({ type: 'chunk', data: a, done: false, status_code: 206, context_id: m.context_id, flush_id: id }),
          () => ws.send(JSON.stringify({ type: 'flush_done', done: false, flush_done: true, flush_id: id, status_code: 206, context_id: m.context_id })));
      } else if (m.continue === false) {
        pending.then(() => ws.send(JSON.stringify({ type: 'done', done: true, status_code: 206, context_id: m.context_id })));
      } else {
        text += m.transcript;
      }
    }
  });
}

// Two audio messages for a chunk's text, LAT ms from t0 (its arrival) and
// 10 ms apart, each naming half of its characters; then `after`.  A
// promise of the end.
let answered = 0; // chunks answered so far (badutf8 fails the second)

function answer(ws, t0, t, shape, after) {
  const chars = [...t];
  const half = Math.ceil(chars.length / 2);
  let done;
  const p = new Promise((r) => (done = r));
  answered++;
  const nth = answered;
  setTimeout(() => {
    if (mode === 'badutf8' && nth === 2) {
      // A text frame whose payload is not UTF-8: the ws package sends a
      // Buffer as it is when told it is text.
      const msg = dialect === 'elevenlabs'
        ? '{"message":"voice \xff\xfe\xc3 not found","error":"bad\xe9voice","code":1008}'
        : '{"type":"error","error":"voice \xff\xfe\xc3 not found","status_code":404,"done":true}';
      ws.send(Buffer.from(msg, 'latin1'), { binary: false });
      done();
      return;
    }
    if (mode === 'empty') {
      if (dialect === 'elevenlabs')
        ws.send(JSON.stringify({ audio: null, isFinal: true })); // the end, no audio
      if (after) after();
      done();
      return;
    }
    if (mode === 'binary') return ws.send(Buffer.from([1, 2, 3, 4]), { binary: true });
    if (mode === 'badjson') return ws.send('{"audio": not json');
    if (mode === 'error')
      return ws.send(
        dialect === 'elevenlabs'
          ? JSON.stringify({ message: 'voice_not_found: the voice does not exist', error: 'voice_not_found', code: 1008 })
          : JSON.stringify({ type: 'error', error: 'voice not found', status_code: 404, done: true }),
      );
    ws.send(shape(pcm(), chars.slice(0, half)));
    log({ first_audio_ms: performance.now() - t0, loop_lag_ms: loopLag.max / 1e6 });
    if (mode === 'cut') {
      setTimeout(() => ws.terminate(), 10);
      return;
    }
    setTimeout(() => {
      ws.send(shape(pcm(), chars.slice(half)));
      if (after) after();
      if (mode === 'trailing') ws.send(shape(pcm(), []));
      done();
      if (mode === 'close') setTimeout(() => ws.close(1000, 'inactivity'), 20);
    }, 10);
  }, Math.max(0, LAT - (performance.now() - t0)));
  return p;
}

// PORT 0: the system picks a free port, written to LOGFILE.port (whole,
// by a rename) once the server listens, for the test to read.
server.listen(Number(port), '127.0.0.1', () => {
  fs.writeFileSync(logfile + '.port.tmp', server.address().port + '\n');
  fs.renameSync(logfile + '.port.tmp', logfile + '.port');
});
process.on('SIGTERM', () => process.exit(0));
