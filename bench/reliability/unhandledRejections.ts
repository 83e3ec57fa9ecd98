/** The unhandled rejections of a campaign, each a crash the report counts. */
export function watchUnhandledRejections(): { readonly unexpected: string[]; readonly stop: () => void } {
  const unexpected: string[] = [];
  const onUnhandled = (reason: unknown): void => {
    unexpected.push(`unhandled rejection: ${reason instanceof Error ? reason.message : String(reason)}`);
  };
  process.on("unhandledRejection", onUnhandled);
  return { unexpected, stop: () => process.off("unhandledRejection", onUnhandled) };
}
