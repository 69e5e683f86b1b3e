const FRAMES = ['|', '/', '-', '\\'];

/**
 * A one-character spinner while waiting, on a terminal only: piped output gets the lines alone.
 * Lines printed through `print` clear the spinner first, so they are never mixed with it.
 */
export class Spinner {
  #timer: NodeJS.Timeout | undefined;
  #frame = 0;
  #label = '';

  constructor(private readonly stream: NodeJS.WriteStream) {}

  get active() {
    return this.stream.isTTY === true;
  }

  start(label: string) {
    if (!this.active) return;
    this.#label = label;
    this.#timer = setInterval(() => this.#draw(), 120);
    this.#timer.unref();
  }

  print(text: string) {
    if (this.active) this.stream.write('\r\x1b[2K');
    this.stream.write(text);
    if (this.#timer !== undefined) this.#draw();
  }

  stop() {
    if (this.#timer === undefined) return;
    clearInterval(this.#timer);
    this.#timer = undefined;
    this.stream.write('\r\x1b[2K');
  }

  #draw() {
    this.#frame = (this.#frame + 1) % FRAMES.length;
    this.stream.write(`\r${FRAMES[this.#frame]} ${this.#label}`);
  }
}
