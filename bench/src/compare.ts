// Agreement of two benchmark runs question by question (`mneme bench compare A B`): whether each
// question's top-10 list (the ranked units the metrics scored, in order) is the same in both —
// for example the same data on the files store and on Postgres.

export interface CompareReport {
  a: string;
  b: string;
  /** Questions present in both runs. */
  questions: number;
  /** Questions whose top-10 lists are identical, in order. */
  same_top10: number;
  agreement: number;
  /** Questions whose top-10 hold the same units in some order. */
  same_set: number;
  /** The questions that differ (at most 20), with both lists. */
  differing: { question_id: string; a: string[]; b: string[] }[];
}

interface RunFile {
  questions?: { question_id?: string; top10?: string[] }[];
}

/** Compares two result files' per-question top-10 lists. */
export function compareRuns(aName: string, a: RunFile, bName: string, b: RunFile): CompareReport {
  const listOf = (r: RunFile, name: string) => {
    if (!Array.isArray(r.questions) || r.questions.some((q) => !Array.isArray(q.top10)))
      throw new Error(`${name} records no per-question top10 (a longmemeval or locomo result)`);
    return new Map(r.questions.map((q, i) => [q.question_id ?? String(i), q.top10!]));
  };
  const la = listOf(a, aName);
  const lb = listOf(b, bName);
  let questions = 0;
  let same = 0;
  let sameSet = 0;
  const differing: CompareReport['differing'] = [];
  for (const [id, x] of la) {
    const y = lb.get(id);
    if (!y) continue;
    questions++;
    const eq = x.length === y.length && x.every((v, i) => v === y[i]);
    if (eq) same++;
    else if (differing.length < 20) differing.push({ question_id: id, a: x, b: y });
    const sx = [...x].sort();
    const sy = [...y].sort();
    if (sx.length === sy.length && sx.every((v, i) => v === sy[i])) sameSet++;
  }
  return {
    a: aName,
    b: bName,
    questions,
    same_top10: same,
    agreement: questions === 0 ? 0 : Math.round((same / questions) * 10_000) / 10_000,
    same_set: sameSet,
    differing,
  };
}
