/** Terminal output for the demo: a full-screen view redrawn in place (ANSI), or plain lines for pipes and CI. */
import { writeAllSync } from "../common/log.ts";

const ESC = "\x1b[";
/** Switches to the alternate screen and hides the cursor. */
export const ENTER_SCREEN = `${ESC}?1049h${ESC}?25l`;
/** Shows the cursor and returns to the normal screen, as it was before the demo. */
export const LEAVE_SCREEN = `${ESC}?25h${ESC}?1049l`;

/** One frame: cursor home, each line erased to its end, then everything below erased. Pure. */
export function frame(lines: readonly string[]): string {
  return `${ESC}H` + lines.map((l) => `${l}${ESC}K`).join("\r\n") + `\r\n${ESC}J`;
}

/** Writes all of `text` synchronously (log.ts's loop: a partial write is continued, nothing lost on exit). */
export const writeAll = writeAllSync;

/** Where the demo shows itself. */
export interface Screen {
  /** Redraws the view (TTY) or prints a status line (plain). */
  draw(view: () => readonly string[], status: () => string): void;
  /** Shows one story line: printed at once in plain mode; the TTY view has it in its story panel. */
  say(line: string): void;
  /** Restores the terminal. Idempotent. */
  close(): void;
}

/** Full-screen view on a terminal, redrawn in place. */
export function ttyScreen(out: { writeSync(p: Uint8Array): number }): Screen {
  let open = true;
  writeAll(out, ENTER_SCREEN);
  return {
    draw: (view) => {
      if (open) writeAll(out, frame(view()));
    },
    say: () => {},
    close: () => {
      if (!open) return;
      open = false;
      writeAll(out, LEAVE_SCREEN);
    },
  };
}

/** Plain lines: a status line per `draw` (the caller paces them), story lines as they happen. */
export function plainScreen(out: { writeSync(p: Uint8Array): number }): Screen {
  return {
    draw: (_view, status) => writeAll(out, status() + "\n"),
    say: (line) => writeAll(out, line + "\n"),
    close: () => {},
  };
}
