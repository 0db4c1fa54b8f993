// Log normalisation for the matcher: a pasted log -> { lines, flat }.
// The same steps and regular expressions as hooks/errorkb/matcher/normalise.py (read
// its docstring for the why); tests/matcher_cases.json keeps the two equal.
// No "u" flag anywhere: \w and \d are ASCII, as with Python's re.ASCII.

export const MAX_INPUT = 262144;
const ROUGH_CUT = 4 * MAX_INPUT;
const WRAP_MIN = 60;

const ASTRAL = /[\uD800-\uDFFF]/g; // both halves of every astral character, and lone halves
const CONTROL = /[\x00-\x06\x08\x0b\x0c\x0e-\x1a\x1c-\x1f\x7f\ufffd]/g;
const ENTITY = /&(lt|gt|quot|apos|amp|nbsp|#39|#x27|#34|#x22|#47|#x2f|#92|#x5c);/gi;
const ENTITIES = { lt: "<", gt: ">", quot: '"', apos: "'", amp: "&", nbsp: " ", "#39": "'", "#x27": "'",
  "#34": '"', "#x22": '"', "#47": "/", "#x2f": "/", "#92": "\\", "#x5c": "\\" };
const ESCAPE = /\\(?:u([0-9a-fA-F]{4})|(x1[bB]|033|e(?=\[))|([nrt])(?![a-z0-9_])|(["'\\/_*]))/g;
const ANSI = /(?:\x1b|\^\[)\[[0-9;?]{0,32}[ -/]{0,4}[@-~]|\x1b\][^\x07\x1b]{0,256}(?:\x07|\x1b\\)?|[\x07\x1b]|\[(?:[0-9]{1,3};){0,8}[0-9]{1,3}m/g;
const NEWLINE = /\r\n|\r|\n/;
const WORD_END = /[A-Za-z0-9_]$/;
const WORD_START = /^[A-Za-z0-9_]/;
const PREFIX = new RegExp("^(?:" + [
  String.raw`[ \t]{0,8}(?:> ?){1,5}`,
  String.raw`(?:[A-Za-z0-9][\w.-]{0,62})?[ \t]{1,24}\|[ \t]?`,
  String.raw`\[pod/[\w./-]{1,120}\][ \t]?`,
  String.raw`\((?:[A-Za-z_][\w.-]{0,40} )?pid=\d{1,10}(?:, ip=[0-9a-fA-F.:]{3,45})?\)[ \t]?`,
  String.raw`\[(?:rank|RANK|Rank) ?\d{1,5}\]:?[ \t]?`,
  String.raw`\[?\d{4}[-/]\d{2}[-/]\d{2}[T ]\d{2}:\d{2}:\d{2}(?:[.,]\d{1,9})?(?:Z|[+-]\d{2}:?\d{2})?(?: [A-Z]{2}\d{1,3}){0,3}\]?:?[ \t]?`,
  String.raw`\[\d{2}/\d{2}/\d{4}-\d{2}:\d{2}:\d{2}\][ \t]?`,
  String.raw`(?:DEBUG|INFO|WARNING|WARN|ERROR|CRITICAL) \d{2}-\d{2} \d{2}:\d{2}:\d{2}(?:\.\d{1,6})? (?:\[[\w.-]{1,60}:\d{1,6}\[?\]\]?|[\w.-]{1,60}:\d{1,6}\])[ \t]?`,
  String.raw`[IWEF]\d{4} \d{2}:\d{2}:\d{2}\.\d{6}[ \t]{1,8}\d{1,10} [\w.-]{1,60}:\d{1,6}\][ \t]?`,
  String.raw`\[ {0,8}\d{1,8}\.\d{3,9}\][ \t]?`,
  String.raw`\[[A-Z][a-z]{2} [A-Z][a-z]{2} [ 0-9]\d \d{2}:\d{2}:\d{2} \d{4}\][ \t]?`,
  String.raw`[A-Z][a-z]{2} [ 0-9]\d \d{2}:\d{2}:\d{2} [\w.-]{1,64} [\w./-]{1,64}(?:\[\d{1,10}\])?:[ \t]?`,
  String.raw`time=[^ \t]{10,40} level=[A-Z]{3,8} source=[\w./-]{1,60}:\d{1,6}[ \t]`,
  "[\u2502\u2503][ \\t]?",
].join("|") + ")");
const BOX_END = /[ \t]{0,80}[\u2502\u2503][ \t]*$/;
// Rich's log handler prints the record's source file in a right-hand column ("...ERROR: CUDA   batch_handler.py:574")
// and wraps the message below it: without the column, the wrapped message reads as one again.
const RICH_SOURCE = /[ \t]{2,80}[A-Za-z_][\w.-]{0,60}\.py:\d{1,6}[ \t]*$/;
const PATH = /(?<![^ \t"'(=\[,])(?:[A-Za-z]:)?(?:[\\/][\w.@+~-]{1,128}){3,64}/g;
const PACKAGES = /^.{0,4000}?[\\/](?:site|dist)-packages[\\/]/;
const ADDRESS = /\b0x[0-9a-fA-F]{9,16}\b/g; // 64-bit addresses; 8-digit codes (Windows NTSTATUS exit codes) stay
const HASH = /\b[0-9a-fA-F]{32,128}\b/g;
// Lines that carry no words of the log: Python 3.11+ caret and tilde markers, Markdown
// fences and the <details> wrapping of an issue form.
const NOISE = /^[ \t]*(?:[~^]{3,}[ \t~^]*|`{3,}[\w-]{0,20}|<\/?(?:details|pre|code)>|<summary>.{0,200}<\/summary>)[ \t]*$/i;
const SPACE = /[ \t\n\r\f\v\u00a0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000\ufeff]+/g;

/** At most MAX_INPUT characters: the head and the tail of a long paste. */
export function bound(text) {
  if (text.length > ROUGH_CUT) text = text.slice(0, ROUGH_CUT / 2) + "\n" + text.slice(-ROUGH_CUT / 2);
  text = text.replace(ASTRAL, "");
  if (text.length > MAX_INPUT) text = text.slice(0, MAX_INPUT / 2) + "\n" + text.slice(-MAX_INPUT / 2);
  return text;
}

// A Windows path from its drive letter: there "\_" is a folder separator (_run.py, __init__.py), not Markdown's escape.
const WINDOWS_PATH = /(?<![A-Za-z0-9])[A-Za-z]:\\[^\s"'<>|]{1,400}/g;
const PATH_UNDERSCORE = /(?<!\\)\\_/g;

function unescape(_, code, esc, letter, char) {
  if (code !== undefined) {
    const value = parseInt(code, 16);
    if (value === 0x1b) return "\x1b";
    if (value === 0x0a) return "\n";
    return value >= 0x20 && !(value >= 0xd800 && value <= 0xdfff) && value !== 0xfffd ? String.fromCharCode(value) : " ";
  }
  if (esc !== undefined) return "\x1b";
  if (letter !== undefined) return letter === "t" ? " " : "\n";
  return char;
}

/** Undo what HTML pages, Python reprs, JSON bodies and terminals add to a message. */
export function decode(text) {
  text = text.replace(CONTROL, " ");
  text = text.replace(ENTITY, (_, name) => ENTITIES[name.toLowerCase()]);
  text = text.replace(WINDOWS_PATH, (path) => path.replace(PATH_UNDERSCORE, "/_"));
  text = text.replace(ESCAPE, unescape);
  return text.replace(ANSI, "");
}

/** Join lines a terminal hard-wrapped at a fixed width, mid-word. */
export function unwrap(lines) {
  const width = lines.reduce((w, line) => Math.max(w, line.length), 0);
  if (width < WRAP_MIN) return lines;
  // a break inside a word, before a line that does not start a new log record (with a prefix)
  const cut = lines.slice(0, -1).map((line, i) => line.length === width && WORD_END.test(line)
    && WORD_START.test(lines[i + 1]) && !PREFIX.test(lines[i + 1]));
  if (cut.filter(Boolean).length < 2 || new Set(lines.filter((_, i) => cut[i])).size < 2) return lines;
  const out = [lines[0]];
  for (let i = 1; i < lines.length; i++) {
    if (cut[i - 1]) out[out.length - 1] += lines[i];
    else out.push(lines[i]);
  }
  return out;
}

export function stripPrefixes(line) {
  for (let i = 0; i < 4; i++) {
    const shorter = line.replace(PREFIX, "");
    if (shorter === line) break;
    line = shorter;
  }
  return line.replace(BOX_END, "").replace(RICH_SOURCE, "");
}

function shortPath(found) {
  const path = found.replace(/\\/g, "/");
  const inside = path.replace(PACKAGES, "");
  if (inside !== path) return "\u2026/" + inside;
  const parts = path.split("/");
  return parts.length > 4 ? "\u2026/" + parts.slice(-3).join("/") : path;
}

/** Shorten paths to the part that names the package and module; hide addresses and hashes. */
// A shell's report of a child killed by a signal gets the signal's name, as normalise.name_signal does.
const JOB = /^[ \t]{0,8}(?:\*\*|__)?(?:(?:zsh|bash|sh): |.{0,80}line \d{1,6}: {1,4}\d{1,10} )?(killed|illegal instruction|segmentation fault|bus error|\u975e\u6cd5\u6307\u4ee4|\u6bb5\u9519\u8bef|\u5df2\u6740\u6b7b)(?: \((?:core dumped|\u6838\u5fc3\u5df2\u8f6c\u50a8)\))?(?:\*\*|__)?(?:[ \t]{2,}[^ \t].{0,200})?[ \t]*$/i;
const SIGNALS = { "killed": "SIGKILL", "illegal instruction": "SIGILL", "segmentation fault": "SIGSEGV", "bus error": "SIGBUS",
  "\u975e\u6cd5\u6307\u4ee4": "SIGILL", "\u6bb5\u9519\u8bef": "SIGSEGV", "\u5df2\u6740\u6b7b": "SIGKILL" };

export function nameSignal(line) {
  const found = JOB.exec(line);
  return found ? `${line.replace(/[ \t]+$/, "")} (signal ${SIGNALS[found[1].toLowerCase()]})` : line;
}

export function tidy(line) {
  return line.replace(PATH, shortPath).replace(ADDRESS, "0x\u2026").replace(HASH, "\u2026");
}

export function normalise(text) {
  text = decode(bound(String(text ?? "")));
  const lines = unwrap(text.split(NEWLINE)).map((line) => tidy(nameSignal(stripPrefixes(line))))
    .filter((line) => line.replace(/^[ \t]+|[ \t]+$/g, "") !== "" && !NOISE.test(line));
  const flat = lines.join(" ").replace(SPACE, " ").replace(/^ +| +$/g, "");
  return { lines, flat };
}
