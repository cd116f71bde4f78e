/**
 * What a log line must never carry raw: the C0 controls (ESC starts a terminal's escape sequences,
 * CR and LF start a forged line), DEL, the C1 controls (U+009B is a one-character CSI to some
 * terminals) and U+2028/U+2029 (line breaks to JavaScript and to some log viewers). Client text
 * reaches the log (a model name is whatever the client sent), so every format escapes them.
 */
// oxlint-disable-next-line no-control-regex -- matching control characters is the point
const CONTROLS = /[\u0000-\u001f\u007f-\u009f\u2028\u2029]/g;
// oxlint-disable-next-line no-control-regex -- the same, to test for
const ANY_CONTROL = /[\u0000-\u001f\u007f-\u009f\u2028\u2029]/;

/** The same, less the C0 controls, which JSON.stringify (and pino) already escape. */
const BEYOND_JSON = /[\u007f-\u009f\u2028\u2029]/g;

const escape = (char: string) => `\\u${char.charCodeAt(0).toString(16).padStart(4, '0')}`;

export function hasControls(text: string): boolean {
  return ANY_CONTROL.test(text);
}

/** Every control character as a `\u001b`-style escape (the JSON spelling, so one form in every format). */
export function escapeControls(text: string): string {
  return text.replace(CONTROLS, escape);
}

/**
 * A JSON log line with what JSON leaves raw escaped too. These characters can only be inside
 * the line's strings, where `\u0085` is their valid JSON spelling: the line parses to the same
 * values. Its trailing newline is kept.
 */
export function escapeJsonLine(line: string): string {
  return line.replace(BEYOND_JSON, escape);
}
