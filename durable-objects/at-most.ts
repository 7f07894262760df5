/** Waits for `work` at most `ms` (it goes on afterwards); never throws. */
export async function atMost(work: Promise<unknown>, ms: number): Promise<void> {
  let timer: ReturnType<typeof setTimeout> | null = null;
  const waited = new Promise<void>((resolve) => (timer = setTimeout(resolve, ms)));
  await Promise.race([work.catch(() => {}), waited]);
  clearTimeout(timer);
}
