/**
 * node-forge's entry points stood in for during one synchronous archive read (the lean key
 * derivation, ciphers and bag reading of certificateBundle.ts), and put back after it whatever the
 * read does: no other caller of forge in the process ever sees a replacement.
 */

/** A function of a forge module, by its owner and name, and what stands in for it. */
export type Replacement = readonly [owner: object, name: string, replacement: unknown];

/** Runs `read` with each replacement in place, restoring forge's own afterwards. */
export function withReplaced<T>(replacements: readonly Replacement[], read: () => T): T {
  const slots = replacements.map(([owner, name]) => [owner as Record<string, unknown>, name] as const);
  const originals = slots.map(([owner, name]) => owner[name]);
  replacements.forEach(([, , replacement], index) => {
    const [owner, name] = slots[index];
    owner[name] = replacement;
  });
  try {
    return read();
  } finally {
    slots.forEach(([owner, name], index) => {
      owner[name] = originals[index];
    });
  }
}
