/**
 * Two ways for an object to let other work run before it goes on, at very different prices
 * under workerd, which rounds every timer up to its next millisecond tick (a `setTimeout(0)`
 * costs about 1.1 ms of waiting under `wrangler dev`, measured):
 *
 * - `afterQueuedEvents()` resolves once the events the runtime has already queued have run
 *   (other calls into this object, responses that arrived together), in microseconds: reading
 *   a body goes through the runtime's event queue, behind them. It does not look for new
 *   input (the network is polled only when the queue is empty).
 * - `nextTask()` waits for a timer, which lets the runtime poll the network, so requests that
 *   have not arrived yet (a status read) are served meanwhile. It costs the timer's tick.
 */
export const afterQueuedEvents = (): Promise<unknown> => new Response("").arrayBuffer();

export const nextTask = (): Promise<void> => new Promise((resolve) => setTimeout(resolve, 0));
