// Deterministic synthetic text for the Postgres benchmarks (mulberry32 over a Zipf-like
// vocabulary: low indexes are common words, high ones rare), so runs are comparable.

function rng(seed: number) {
  return () => {
    seed = (seed + 0x6d2b79f5) | 0;
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const SYLLABLES = 'ka lo mi ne ru sa ti vo ze pa qu dor fen gal hix jun kel mor nip'.split(' ');

export function syntheticText(seed: number) {
  const rand = rng(seed);
  const vocab = Array.from({ length: 3000 }, () => {
    const k = 2 + Math.floor(rand() * 3);
    return Array.from({ length: k }, () => SYLLABLES[Math.floor(rand() * SYLLABLES.length)]).join(
      '',
    );
  });
  const word = () => vocab[Math.floor(Math.pow(rand(), 2.2) * vocab.length)]!;
  const words = (n: number) => Array.from({ length: n }, word).join(' ');
  return { rand, word, words };
}
