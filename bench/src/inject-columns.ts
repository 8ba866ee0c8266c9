// The per-floor figures of `mneme bench inject`, in the order its table and the docs show them.
export const INJECT_COLUMNS = [
  'inject_share',
  'evidence_recall',
  'bytes_per_prompt',
  'precision',
  'off_topic_inject_share',
] as const;
