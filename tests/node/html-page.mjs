// html-page.mjs - opens a ttsbuf --html page in the system Chromium
// (headless, through the DevTools protocol with puppeteer-core) and prints
// what a reviewer would meet, as one JSON object, for tests/test_html.c to
// hold against the JSON report and the WAV:
//   node html-page.mjs PAGE.html [SCREENSHOT.png]
// The screenshot carries the text it shows (every visible text node, one a
// line) in an iTXt chunk with the keyword "ttsbuf:text", so that a test can
// hold a committed screenshot's names and numbers to what the tool writes
// today without comparing pixels.
// Nothing here decides pass or fail except a page that cannot be driven.
import puppeteer from 'puppeteer-core';
import { pathToFileURL } from 'node:url';
import { writeFileSync } from 'node:fs';
import zlib from 'node:zlib';

// An iTXt chunk (uncompressed UTF-8 text, PNG 1.2 section 4.2.3.3)
// inserted before the IEND chunk, the last 12 bytes of a PNG.
function withText(png, keyword, text) {
  if (typeof zlib.crc32 !== 'function') throw new Error('html-page.mjs: needs Node.js with zlib.crc32 (20.15 or later)');
  const data = Buffer.concat([Buffer.from(keyword + '\0\0\0\0\0', 'latin1'), Buffer.from(text, 'utf8')]);
  const type = Buffer.from('iTXt', 'latin1');
  const len = Buffer.alloc(4), crc = Buffer.alloc(4);
  len.writeUInt32BE(data.length);
  crc.writeUInt32BE(zlib.crc32(Buffer.concat([type, data])) >>> 0);
  const end = png.length - 12;
  return Buffer.concat([png.subarray(0, end), len, type, data, crc, png.subarray(end)]);
}

const [page_path, shot] = process.argv.slice(2);
const url = pathToFileURL(page_path).href;
const browser = await puppeteer.launch({
  executablePath: process.env.TB_CHROMIUM || '/usr/bin/chromium',
  headless: true,
  args: ['--no-sandbox', '--disable-gpu', '--autoplay-policy=no-user-gesture-required',
         '--mute-audio', '--use-fake-ui-for-media-stream', '--disable-background-networking',
         '--no-first-run'],
});
const out = { console_errors: [], requests: [], sections: [] };
try {
  const page = await browser.newPage();
  await page.setViewport({ width: 1100, height: 900 });
  page.on('console', (m) => { if (m.type() === 'error') out.console_errors.push(m.text()); });
  page.on('pageerror', (e) => out.console_errors.push(String(e)));
  page.on('request', (r) => {
    const u = r.url();
    if (u !== url && !u.startsWith('data:')) out.requests.push(u);
  });
  await page.goto(url, { waitUntil: 'load' });
  out.kind = await page.evaluate(() => document.body.getAttribute('data-kind'));
  out.result = await page.evaluate(() => {
    const e = document.getElementById('result');
    return e ? JSON.parse(e.textContent) : null;
  });
  out.levels = await page.evaluate(() => [...document.querySelectorAll('#levels tbody tr')].map(
    (r) => [...r.cells].map((c) => (c.hasAttribute('data-v') ? c.getAttribute('data-v') : c.textContent))));
  // The charts of a page of several runs (compare): each series' run,
  // its line's dash pattern and its points' x (runs with equal values
  // must stay visible), and the legend's words.
  out.charts = await page.evaluate(() => [...document.querySelectorAll('svg[data-chart]')].map((s) => ({
    chart: s.getAttribute('data-chart'),
    title: s.querySelector('title').textContent,
    series: [...s.querySelectorAll('g.series')].map((g) => ({
      run: g.getAttribute('data-run'),
      n: g.hasAttribute('data-n') ? +g.getAttribute('data-n') : null,
      lines: g.querySelectorAll('path').length,
      color: (g.querySelector('path, circle') || { getAttribute: () => null }).getAttribute('stroke')
        || g.querySelector('circle')?.getAttribute('fill') || null,
      dash: g.querySelector('path')?.getAttribute('stroke-dasharray') || null,
      points: [...g.querySelectorAll('circle')].map((c) => +c.getAttribute('data-v')),
      xs: [...g.querySelectorAll('circle')].map((c) => +c.getAttribute('cx')),
    })),
    legend: [...s.querySelectorAll('g.legend text')].map((t) => t.textContent),
  })));
  // Every bar of the wait's pictures (a turn's, a level's percentile):
  // its label, each part's seconds by part index (null: not measured; a
  // part absent: not drawn at all) and its total's tick.
  out.waits = await page.evaluate(() => [...document.querySelectorAll('svg[data-chart="wait"] g.wait')].map((g) => {
    const parts = {};
    g.querySelectorAll('.part').forEach((p) => {
      const s = p.getAttribute('data-s');
      parts[p.getAttribute('data-part')] = s === 'null' ? null : +s;
    });
    const t = g.querySelector('line.total');
    return { label: g.getAttribute('data-label'), parts, total: t ? +t.getAttribute('data-s') : null,
             section: g.closest('section.tb-run') ? [...document.querySelectorAll('section.tb-run')].indexOf(g.closest('section.tb-run')) : null };
  }));
  // The note a page of a live TTS without its audio carries.
  out.live_notes = await page.evaluate(() => [...document.querySelectorAll('p.live-tts')].map((e) => e.textContent));
  const nsec = await page.evaluate(() => document.querySelectorAll('section.tb-run').length);
  for (let i = 0; i < nsec; i++) {
    // Open the section when it sits in a closed <details> (bench).
    await page.evaluate((i) => {
      const s = document.querySelectorAll('section.tb-run')[i];
      for (let d = s.closest('details'); d; d = d.parentElement && d.parentElement.closest('details')) d.open = true;
      s.scrollIntoView();
    }, i);
    // A section without audio (a live TTS whose audio was not kept): its
    // picture and its numbers, nothing to play.
    const silent = await page.evaluate((i) => {
      const s = document.querySelectorAll('section.tb-run')[i];
      if (s.querySelector('audio')) return null;
      const svg = s.querySelector('svg');
      return {
        audio: false,
        x0: svg ? +svg.getAttribute('data-x0') : null, pps: svg ? +svg.getAttribute('data-px-per-s') : null,
        gaps: [...s.querySelectorAll('ol.gaps a')].map((l) => [+l.getAttribute('data-at'), +l.getAttribute('data-len')]),
        details: (s.closest('details') || {}).id || null,
        shown: s.offsetParent !== null,
        result: JSON.parse(s.querySelector('script[type="application/json"]').textContent),
      };
    }, i);
    if (silent) {
      out.sections.push(silent);
      continue;
    }
    await page.waitForFunction((i) => {
      const a = document.querySelectorAll('section.tb-run')[i].querySelector('audio');
      return a && a.readyState >= 1 && isFinite(a.duration);
    }, { timeout: 30000 }, i);
    const sec = await page.evaluate((i) => {
      const s = document.querySelectorAll('section.tb-run')[i];
      const svg = s.querySelector('svg'), a = s.querySelector('audio');
      return {
        duration: a.duration,
        frames: +a.getAttribute('data-frames'), rate: +a.getAttribute('data-rate'),
        x0: +svg.getAttribute('data-x0'), pps: +svg.getAttribute('data-px-per-s'),
        gaps: [...s.querySelectorAll('ol.gaps a')].map((l) => [+l.getAttribute('data-at'), +l.getAttribute('data-len')]),
        details: (s.closest('details') || {}).id || null,
        result: JSON.parse(s.querySelector('script[type="application/json"]').textContent),
      };
    }, i);
    // Clicking gap k: the position and the play head, read at once.
    sec.clicks = [];
    for (let k = 0; k < sec.gaps.length; k++) {
      sec.clicks.push(await page.evaluate((i, k) => {
        const s = document.querySelectorAll('section.tb-run')[i];
        s.querySelectorAll('ol.gaps a')[k].click();
        const a = s.querySelector('audio'), h = s.querySelector('line.playhead');
        const r = { t: a.currentTime, x: +h.getAttribute('x1') };
        a.pause();
        return r;
      }, i, k));
    }
    // Play a moment from the first gap's seek point (or from 0).
    const before = await page.evaluate((i) => {
      const s = document.querySelectorAll('section.tb-run')[i];
      const l = s.querySelector('ol.gaps a');
      if (l) l.click(); else { const a = s.querySelector('audio'); a.currentTime = 0; a.play(); }
      const a = s.querySelector('audio');
      return { t: a.currentTime, x: +s.querySelector('line.playhead').getAttribute('x1') };
    }, i);
    await new Promise((r) => setTimeout(r, 1500));
    const after = await page.evaluate((i) => {
      const s = document.querySelectorAll('section.tb-run')[i];
      const a = s.querySelector('audio');
      const r = { t: a.currentTime, x: +s.querySelector('line.playhead').getAttribute('x1'), paused: a.paused };
      a.pause();
      return r;
    }, i);
    sec.play = { before, after };
    // Keys: n goes to the next gap's seek point, p back, space pauses/plays.
    await page.evaluate((i) => {
      const s = document.querySelectorAll('section.tb-run')[i];
      const a = s.querySelector('audio');
      a.currentTime = 0;
      a.dispatchEvent(new Event('play'));
      a.pause();
    }, i);
    await page.keyboard.press('n');
    const tn = await page.evaluate((i) => document.querySelectorAll('section.tb-run')[i].querySelector('audio').currentTime, i);
    await page.keyboard.press('n');
    const tn2 = await page.evaluate((i) => document.querySelectorAll('section.tb-run')[i].querySelector('audio').currentTime, i);
    await page.keyboard.press('p');
    const tp = await page.evaluate((i) => {
      const a = document.querySelectorAll('section.tb-run')[i].querySelector('audio');
      const t = a.currentTime; a.pause(); return t;
    }, i);
    sec.keys = { n: tn, nn: tn2, p: tp };
    out.sections.push(sec);
  }
  // The sortable tables (bench): the order after clicking a header.
  out.sorts = await page.evaluate(() => {
    const r = {};
    document.querySelectorAll('table.sortable th[data-sort]').forEach((th) => {
      const tb = th.closest('table'), ci = th.cellIndex;
      th.click();
      const v = [...tb.tBodies[0].rows].map((row) => row.cells[ci].getAttribute('data-v'));
      r[th.getAttribute('data-sort')] = v;
    });
    return r;
  });
  if (shot) {
    await page.evaluate(() => { window.scrollTo(0, 0); document.querySelectorAll('audio').forEach((a) => { a.pause(); a.currentTime = 0; }); });
    const text = await page.evaluate(() => {
      const W = window.innerWidth, H = window.innerHeight, out = [];
      const walk = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
      for (let n = walk.nextNode(); n; n = walk.nextNode()) {
        const t = n.textContent.replace(/\s+/g, ' ').trim();
        const el = n.parentElement;
        // tooltips (SVG <title>) and scripts are not seen
        if (!t || !el || el.closest('script,style,title')) continue;
        const r = document.createRange();
        r.selectNodeContents(n);
        const seen = [...r.getClientRects()].some((b) => b.width > 0 && b.bottom > 0 && b.top < H && b.right > 0 && b.left < W);
        if (seen) out.push(t);
      }
      return out.join('\n');
    });
    writeFileSync(shot, withText(await page.screenshot({ fullPage: false }), 'ttsbuf:text', text));
  }
  // Scripts off: the numbers, the picture and a plain audio control remain.
  const bare = await browser.newPage();
  await bare.setJavaScriptEnabled(false);
  await bare.goto(url, { waitUntil: 'load' });
  out.noscript = await bare.evaluate(() => ({
    text: document.body.innerText.length,
    svgs: document.querySelectorAll('svg').length,
    audios: document.querySelectorAll('audio[controls]').length,
    gaps: document.querySelectorAll('ol.gaps li').length,
    report: (document.getElementById('report') || {}).textContent || '',
    heads: document.querySelectorAll('line.playhead').length,
  }));
} finally {
  await browser.close();
}
process.stdout.write(JSON.stringify(out) + '\n');
