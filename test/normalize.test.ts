// Tombstone keys survive respelling (case, width, homoglyphs, zero-width characters, spacing,
// punctuation, digits of other scripts) and the near-duplicate check refuses restatements and
// look-alike respellings (letters spaced out, words split or joined, leetspeak), in an abstract
// or inside a body, while a different value passes. Each refusal is paired with a control.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import {
  contentKey,
  matchTombstone,
  matchTombstoneInPassage,
  nearDuplicate,
  normalizeValue,
  tombstoneKey,
  type Tombstone,
} from '../src/core/normalize.js';
import { confusableSkeleton } from '../src/core/confusables.js';

const SCOPE = 'project:acme-api-1a2b3c';

test('normalizeValue folds case, width, invisibles, look-alikes, punctuation and spacing', () => {
  const cases: [string, string][] = [
    ['  Use   PNPM!!  ', 'use pnpm'],
    ['Straße', 'strasse'],
    ['ＵＳＥ　ｐｎｐｍ', 'use pnpm'],
    ['port 𝟖𝟎𝟖𝟎', 'port 8080'],
    ['p\u200Bn\u200Dp\u2060m\uFEFF', 'pnpm'],
    ['u\u00ADse p\u202Enpm', 'use pnpm'],
    ['\u0440n\u0440m', 'pnpm'], // Cyrillic er
    ['\u03BF\u0440\u0435\u0438', 'ope\u0438'], // Greek omicron, Cyrillic er/ie; и has no Latin twin
    ['café résumé', 'cafe resume'],
    ['İstanbul', 'istanbul'],
    ['Node v1.4.3.', 'node v1.4.3'],
    ['don’t use npm', 'dont use npm'],
    ['limit: 1,000 rps', 'limit 1000 rps'],
    ['us-east-1 / eu_west_2', 'us east 1 eu west 2'],
    ['東京 の サーバー', '東京 の サーバー'],
  ];
  for (const [input, expected] of cases) {
    assert.equal(normalizeValue(input), expected, JSON.stringify(input));
  }
});

test('tombstoneKey is a sha256 hex keyed on scope and normalised value', () => {
  const key = tombstoneKey(SCOPE, 'Use PNPM');
  assert.match(key, /^[0-9a-f]{64}$/);
  assert.equal(tombstoneKey(SCOPE, ' use   pnpm. '), key);
  assert.notEqual(tombstoneKey('global', 'Use PNPM'), key);
  assert.notEqual(tombstoneKey(SCOPE, 'Use npm'), key);
});

// --- property tests ---------------------------------------------------------------------------

const WORDS = ['deploy', 'cache', 'postgres', 'region', 'timeout', 'billing', 'worker', 'redis'];
const ascii = fc
  .array(fc.oneof(fc.constantFrom(...WORDS), fc.string({ unit: 'grapheme-ascii', maxLength: 8 })), {
    minLength: 1,
    maxLength: 8,
  })
  .map((ws) => ws.join(' '));

test('normalizeValue is idempotent, on ASCII and on arbitrary Unicode', () => {
  for (const unit of ['grapheme-ascii', 'grapheme', 'binary'] as const) {
    fc.assert(
      fc.property(fc.string({ unit, maxLength: 60 }), (s) => {
        const once = normalizeValue(s);
        assert.equal(normalizeValue(once), once);
      }),
      { numRuns: 500 },
    );
  }
});

const ZERO_WIDTH = ['\u200B', '\u200C', '\u200D', '\u2060', '\uFEFF', '\u00AD', '\u180E'];

test('inserting zero-width characters never changes the key', () => {
  fc.assert(
    fc.property(
      ascii,
      fc.array(fc.tuple(fc.nat(), fc.constantFrom(...ZERO_WIDTH)), { maxLength: 6 }),
      (s, inserts) => {
        let t = s;
        for (const [at, zw] of inserts) {
          const i = at % (t.length + 1);
          t = t.slice(0, i) + zw + t.slice(i);
        }
        assert.equal(tombstoneKey(SCOPE, t), tombstoneKey(SCOPE, s));
      },
    ),
  );
});

test('changing the case of ASCII letters never changes the key', () => {
  fc.assert(
    fc.property(ascii, fc.array(fc.boolean(), { minLength: 64, maxLength: 64 }), (s, flips) => {
      const t = [...s].map((ch, i) => (flips[i % 64] ? ch.toUpperCase() : ch.toLowerCase()));
      assert.equal(tombstoneKey(SCOPE, t.join('')), tombstoneKey(SCOPE, s));
    }),
  );
});

test('fullwidth ASCII letters and digits never change the key', () => {
  const fullwidth = (ch: string) =>
    /[A-Za-z0-9]/.test(ch) ? String.fromCodePoint(ch.codePointAt(0)! + 0xfee0) : ch;
  fc.assert(
    fc.property(ascii, fc.array(fc.boolean(), { minLength: 64, maxLength: 64 }), (s, pick) => {
      const t = [...s].map((ch, i) => (pick[i % 64] ? fullwidth(ch) : ch)).join('');
      assert.equal(tombstoneKey(SCOPE, t), tombstoneKey(SCOPE, s));
    }),
  );
});

/** Latin → Cyrillic/Greek look-alike, the substitutions homoglyph attacks use. */
const HOMOGLYPHS: Record<string, string[]> = {
  a: ['\u0430', '\u03B1'],
  c: ['\u0441', '\u03F2'],
  d: ['\u0501'],
  e: ['\u0435'],
  h: ['\u04BB'],
  i: ['\u0456', '\u03B9'],
  j: ['\u0458'],
  o: ['\u043E', '\u03BF', '\u0585'],
  p: ['\u0440', '\u03C1'],
  s: ['\u0455'],
  x: ['\u0445', '\u03C7'],
  y: ['\u0443'],
  A: ['\u0410', '\u0391'],
  B: ['\u0412', '\u0392'],
  E: ['\u0415', '\u0395'],
  H: ['\u041D', '\u0397'],
  K: ['\u041A', '\u039A'],
  M: ['\u041C', '\u039C'],
  O: ['\u041E', '\u039F'],
  P: ['\u0420', '\u03A1'],
  T: ['\u0422', '\u03A4'],
  X: ['\u0425', '\u03A7'],
};

test('swapping Latin letters for Cyrillic or Greek homoglyphs never changes the key', () => {
  fc.assert(
    fc.property(ascii, fc.array(fc.nat(), { minLength: 64, maxLength: 64 }), (s, picks) => {
      const t = [...s]
        .map((ch, i) => {
          const options = HOMOGLYPHS[ch];
          const pick = picks[i % 64]!;
          return options && pick % 3 !== 0 ? options[pick % options.length]! : ch;
        })
        .join('');
      assert.equal(tombstoneKey(SCOPE, t), tombstoneKey(SCOPE, s));
    }),
  );
  // The table maps each look-alike to the letter it imitates.
  for (const [latin, glyphs] of Object.entries(HOMOGLYPHS)) {
    for (const g of glyphs) assert.equal(confusableSkeleton(g), latin, `${g} → ${latin}`);
  }
});

// --- near duplicates: examples ----------------------------------------------------------------

test('near duplicates: filler words and reordered clauses match; other values do not', () => {
  const rejected = 'We use pnpm, not npm, for installs in CI';
  const same = [
    'we use pnpm not npm for installs in ci',
    'For installs in CI we basically just use pnpm, not npm',
    'Note: the team should always use pnpm (not npm) for installs in CI.',
    'In CI, for installs: pnpm, not npm.',
  ];
  const different = [
    'We use npm for installs in CI', // the rejected choice, drops pnpm and the negation
    'We use pnpm for installs in CI', // negation removed
    'We use yarn, not npm, for installs in CI', // another name
    'We use pnpm, not npm, for installs in CI and on laptops', // adds content
  ];
  for (const c of same) {
    const r = nearDuplicate(rejected, c);
    assert.equal(r.match, true, `${c}: ${r.reason}`);
  }
  for (const c of different) {
    const r = nearDuplicate(rejected, c);
    assert.equal(r.match, false, `${c}: ${r.reason}`);
  }
});

test('near duplicates: numbers, versions, regions, names and negations tell values apart', () => {
  const pairs: [string, string, string, string][] = [
    // rejected, restated (must match), different value (must not), reason fragment
    [
      'Cache TTL is 300 seconds',
      'the cache TTL is basically 300 seconds',
      'Cache TTL is 3600 seconds',
      'number',
    ],
    ['Pin Node to 18.4.3', 'Node: pin to 18.4.3', 'Pin Node to 18.4.4', 'number or version'],
    [
      'Deploy region is us-east-1',
      'deploy region: us-east-1',
      'Deploy region is eu-west-1',
      'word',
    ],
    ['API v2 is the default', 'The default is API v2', 'API v3 is the default', 'v3'],
    [
      'The on-call lead for payments is Alice',
      'for payments, the on-call lead is Alice',
      'The on-call lead for payments is Bob',
      'bob',
    ],
    [
      'Run migrations before deploy',
      'before deploy, run migrations',
      'Never run migrations before deploy',
      'negation',
    ],
  ];
  for (const [rejected, restated, other, why] of pairs) {
    const yes = nearDuplicate(rejected, restated);
    assert.equal(yes.match, true, `${restated}: ${yes.reason}`);
    const no = nearDuplicate(rejected, other);
    assert.equal(no.match, false, `${other}: ${no.reason}`);
    assert.match(no.reason, new RegExp(why));
  }
});

test('near duplicates: the threshold bounds how many connective words may differ', () => {
  const rejected = 'cache results from billing in redis for reports';
  const oneOff = 'cache results from billing in redis for reports or dashboards';
  assert.equal(nearDuplicate(rejected, oneOff).match, false, 'adds a content word');
  const connective = 'cache results of billing with redis over reports';
  const r = nearDuplicate(rejected, connective);
  assert.equal(r.match, false);
  assert.ok(r.similarity < 0.8, r.reason);
  assert.equal(nearDuplicate(rejected, connective, 0.2).match, true, 'a lower threshold admits it');
});

test('a full paraphrase is not caught (accepted by design)', () => {
  const r = nearDuplicate('We use pnpm for installs', 'Dependencies get installed with pnpm');
  assert.equal(r.match, false);
  assert.equal(nearDuplicate('We use pnpm for installs', 'we use pnpm for installs').match, true);
});

// --- near duplicates: properties --------------------------------------------------------------

const CONTENT = ['deploy', 'cache', 'postgres', 'region', 'timeout', 'billing', 'worker', 'queue'];
const FILLER_SAMPLE = ['the', 'basically', 'we', 'should', 'just', 'really', 'please', 'is', 'a'];
const NAMES = ['alice', 'bob', 'carol', 'dmitri', 'priya', 'zoe'];

const clause = fc
  .tuple(
    fc.shuffledSubarray(CONTENT, { minLength: 2, maxLength: 3 }),
    fc.integer({ min: 1, max: 9999 }),
  )
  .map(([words, n]) => `${words.join(' ')} ${n}`);
const clauses = fc.array(clause, { minLength: 2, maxLength: 3 });

test('property: inserting filler words is refused as a near duplicate', () => {
  fc.assert(
    fc.property(
      clauses,
      fc.array(fc.tuple(fc.nat(), fc.constantFrom(...FILLER_SAMPLE)), {
        minLength: 1,
        maxLength: 5,
      }),
      (cs, inserts) => {
        const rejected = cs.join(', ');
        const words = rejected.split(' ');
        for (const [at, w] of inserts) words.splice(at % (words.length + 1), 0, w);
        const r = nearDuplicate(rejected, words.join(' '));
        assert.equal(r.match, true, r.reason);
      },
    ),
  );
});

test('property: reordering clauses is refused as a near duplicate', () => {
  fc.assert(
    fc.property(clauses, fc.nat(), fc.constantFrom('; ', ', and ', '. '), (cs, rot, sep) => {
      const rejected = cs.join('; ');
      const k = (rot % (cs.length - 1)) + 1;
      const reordered = [...cs.slice(k), ...cs.slice(0, k)].join(sep);
      const r = nearDuplicate(rejected, reordered);
      assert.equal(r.match, true, r.reason);
    }),
  );
});

test('property: the same sentence with another number, version or name is accepted', () => {
  fc.assert(
    fc.property(
      fc.shuffledSubarray(CONTENT, { minLength: 2, maxLength: 4 }),
      fc.integer({ min: 0, max: 99999 }),
      fc.integer({ min: 0, max: 99999 }),
      fc.constantFrom(...NAMES),
      fc.constantFrom(...NAMES),
      fc.tuple(fc.nat(9), fc.nat(9), fc.nat(20)),
      (words, n, m, nameA, nameB, [major, minor, patch]) => {
        const base = words.join(' ');
        const number = nearDuplicate(`${base} ${n}`, `${base} ${m}`);
        assert.equal(number.match, n === m, number.reason);
        const name = nearDuplicate(`${base} owned by ${nameA}`, `${base} owned by ${nameB}`);
        assert.equal(name.match, nameA === nameB, name.reason);
        const v = `${major}.${minor}.${patch}`;
        const version = nearDuplicate(`${base} v${v}`, `${base} v${major}.${minor}.${patch + 1}`);
        assert.equal(version.match, false, version.reason);
        assert.equal(nearDuplicate(`${base} v${v}`, `the ${base} v${v}`).match, true);
      },
    ),
  );
});

// --- matchTombstone ---------------------------------------------------------------------------

function tombstone(scope: string, value: string): Tombstone {
  return {
    key: tombstoneKey(scope, value),
    scope,
    kind: 'value',
    value_norm: normalizeValue(value),
    reason: 'wrong',
    actor: { kind: 'human' },
    at: '2025-01-01T00:00:00.000Z',
    from_op: 'retract',
    memory: 'mem_01',
  };
}

test('matchTombstone: exact key, then near duplicate, only within the same scope', () => {
  const t = tombstone(SCOPE, 'Deploy region is us-east-1');
  const other = tombstone('global', 'Cache TTL is 300 seconds');
  const all = [other, t];
  assert.equal(matchTombstone(all, SCOPE, 'DEPLOY REGION IS US-EAST-1'), t);
  assert.equal(matchTombstone(all, SCOPE, 'Dеploy rеgion is us‐east‐1'), t); // Cyrillic е, hyphens
  assert.equal(matchTombstone(all, SCOPE, 'The deploy region is basically us-east-1'), t);
  assert.equal(matchTombstone(all, SCOPE, 'Deploy region is eu-west-1'), null);
  assert.equal(matchTombstone(all, 'global', 'Deploy region is us-east-1'), null);
  assert.equal(matchTombstone(all, 'global', 'cache ttl is 300 seconds'), other);
  assert.equal(matchTombstone(all, SCOPE, 'Cache TTL is 300 seconds'), null);
});

test('contentKey is shared by every near duplicate and differs for another value', () => {
  const key = contentKey(SCOPE, 'Deploy region is us-east-1');
  assert.match(key ?? '', /^[0-9a-f]{64}$/);
  assert.equal(contentKey(SCOPE, 'the deploy region: basically us-east-1'), key);
  assert.notEqual(contentKey(SCOPE, 'Deploy region is us-east-2'), key);
  assert.notEqual(contentKey('global', 'Deploy region is us-east-1'), key);
  assert.equal(contentKey(SCOPE, 'yes, please, just the'), null);
});

// --- look-alike respellings ---------------------------------------------------------------------

const STAGING = 'The staging database password rotates every 90 days';
const staging = () => tombstone(SCOPE, STAGING);
const refusedBy = (t: Tombstone, text: string) => matchTombstone([t], SCOPE, text) === t;

/** Every Unicode decimal digit (\p{Nd}), in runs of ten that start at zero. */
const DIGIT_ZEROS: number[] = [];
for (let cp = 0; cp <= 0x10ffff; cp++) {
  if (cp >= 0xd800 && cp <= 0xdfff) continue;
  const is = (c: number) => /\p{Nd}/u.test(String.fromCodePoint(c));
  if (is(cp) && !(DIGIT_ZEROS.length > 0 && cp - DIGIT_ZEROS.at(-1)! < 10)) DIGIT_ZEROS.push(cp);
}
const inScript = (n: number, zero: number) =>
  [...String(n)].map((d) => String.fromCodePoint(zero + Number(d))).join('');

test('digits of every script fold to their ASCII value (٩٠ is 90, ९० is 90, ٣٠ is 30)', () => {
  assert.ok(DIGIT_ZEROS.length >= 60, `${DIGIT_ZEROS.length} digit sets`);
  for (const zero of DIGIT_ZEROS) {
    for (let d = 0; d <= 9; d++)
      assert.equal(normalizeValue(String.fromCodePoint(zero + d)), String(d), zero.toString(16));
  }
  assert.equal(normalizeValue('every ٩٠ days'), 'every 90 days'); // Arabic-Indic
  assert.equal(normalizeValue('every ۹۰ days'), 'every 90 days'); // Extended Arabic-Indic
  assert.equal(normalizeValue('every ९० days'), 'every 90 days'); // Devanagari
  assert.equal(normalizeValue('every ৯০ days'), 'every 90 days'); // Bengali
  assert.equal(normalizeValue('every ๙๐ days'), 'every 90 days'); // Thai
  assert.equal(normalizeValue('every ９０ days'), 'every 90 days'); // fullwidth
  assert.equal(normalizeValue('limit ٣,٠٠٠ rps'), 'limit 3000 rps');
  const t = staging();
  assert.ok(refusedBy(t, 'The staging database password rotates every ٩٠ days'));
  assert.ok(refusedBy(t, 'The staging database password rotates every ९० days'));
  // Controls: another number, in any script, is another value.
  assert.equal(
    matchTombstone([t], SCOPE, 'The staging database password rotates every ٣٠ days'),
    null,
  );
  assert.equal(
    matchTombstone([t], SCOPE, 'The staging database password rotates every ९ days'),
    null,
  );
});

test('property: a number written in another script is refused; another number is accepted', () => {
  fc.assert(
    fc.property(
      fc.constantFrom(...DIGIT_ZEROS),
      fc.integer({ min: 0, max: 99999 }),
      fc.integer({ min: 0, max: 99999 }),
      fc.shuffledSubarray(CONTENT, { minLength: 2, maxLength: 4 }),
      (zero, n, m, words) => {
        const t = tombstone(SCOPE, `${words.join(' ')} every ${n} days`);
        const same = `${words.join(' ')} every ${inScript(n, zero)} days`;
        assert.equal(matchTombstone([t], SCOPE, same), t, same);
        const other = `${words.join(' ')} every ${inScript(m, zero)} days`;
        assert.equal(matchTombstone([t], SCOPE, other) === t, n === m, other);
      },
    ),
  );
});

test('letters spaced out are refused; spaced out with another value they are accepted', () => {
  const t = staging();
  for (const v of [
    'The staging database p a s s w o r d rotates every 90 days',
    'The s t a g i n g database password rotates every 90 days',
    'The s.t.a.g.i.n.g d_a_t_a_b_a_s_e p-a-s-s-w-o-r-d rotates every 90 days',
    'T h e s t a g i n g d a t a b a s e p a s s w o r d r o t a t e s e v e r y 9 0 d a y s',
    'The staging database password rotates every 9 0 days', // single digits spaced out
    'The staging database p|a|s|s|w|o|r|d rotates every 90 days', // symbols as separators
    'The s$t$a$g$i$n$g d@a@t@a@b@a@s@e p@ss|w|o|r|d rotates every 90 days',
  ])
    assert.ok(refusedBy(t, v), v);
  for (const v of [
    'The s t a g i n g database password rotates every 30 days',
    'The p r o d u c t i o n database password rotates every 90 days',
    'The staging database p a s s w o r d rotates every 9 days',
    'The staging database password rotates every 9 00 days', // two numbers, not 900 nor 90
  ])
    assert.equal(matchTombstone([t], SCOPE, v), null, v);
});

const SEPARATORS = [
  ' ',
  '.',
  '-',
  '_',
  '/',
  ' . ',
  '·',
  ',',
  '*',
  ' - ',
  '\u00A0',
  '~',
  '|',
  '@',
  '$',
  '!',
];
const LETTER_WORD = /^[a-z]{2,}$/i;

/** base with the chosen words' letters spaced out by a separator. */
function spaceOut(base: string, picks: boolean[], sep: string): string {
  return base
    .split(' ')
    .map((w, i) => (LETTER_WORD.test(w) && picks[i % picks.length] ? [...w].join(sep) : w))
    .join(' ');
}

test('property: spacing out letters, with any separator, is refused; another value is accepted', () => {
  fc.assert(
    fc.property(
      fc.shuffledSubarray(CONTENT, { minLength: 2, maxLength: 4 }),
      fc.integer({ min: 0, max: 9999 }),
      fc.integer({ min: 0, max: 9999 }),
      fc.constantFrom(...NAMES),
      fc.constantFrom(...NAMES),
      fc.array(fc.boolean(), { minLength: 8, maxLength: 8 }),
      fc.constantFrom(...SEPARATORS),
      (words, n, m, nameA, nameB, picks, sep) => {
        const t = tombstone(SCOPE, `${words.join(' ')} ${n} owned by ${nameA}`);
        const same = spaceOut(`${words.join(' ')} ${n} owned by ${nameA}`, picks, sep);
        assert.equal(matchTombstone([t], SCOPE, same), t, same);
        const other = spaceOut(`${words.join(' ')} ${m} owned by ${nameB}`, picks, sep);
        assert.equal(matchTombstone([t], SCOPE, other) === t, n === m && nameA === nameB, other);
      },
    ),
  );
});

test('words split or joined are refused; split or joined with another value they are accepted', () => {
  const t = staging();
  for (const v of [
    'The stag-ing data-base password rotates every 90 days',
    'The staging data base password rotates every 90 days',
    'The stagingdatabase password rotates every 90 days',
    'The staging_database pass.word rotates every 90days',
    'thestagingdatabasepasswordrotatesevery90days',
    'every 90 days the stag ing data base password basically rotates', // and reordered
  ])
    assert.ok(refusedBy(t, v), v);
  for (const v of [
    'The staging data base password rotates every 60 days',
    'The stagingdatabase password rotates every 900 days',
    'The staging data base password rotates every 90 days in eu-west-1',
    'The staging database password never rotates every 90 days',
    'thestagingdatabasepasswordrotatesevery9days',
  ])
    assert.equal(matchTombstone([t], SCOPE, v), null, v);
  // A cut never falls inside a number, and two numbers are never joined.
  const port = tombstone(SCOPE, 'The proxy port is 8080');
  assert.ok(refusedBy(port, 'theproxyport is 8080'));
  assert.equal(matchTombstone([port], SCOPE, 'The proxy port is 80 80'), null);
  assert.equal(matchTombstone([port], SCOPE, 'The proxy port is 808'), null);
  assert.equal(matchTombstone([port], SCOPE, 'The proxy port is 80800'), null);
  const short = tombstone(SCOPE, 'The proxy port is 80');
  assert.ok(refusedBy(short, 'The proxyport is 8 0'));
  assert.equal(matchTombstone([short], SCOPE, 'The proxy port is 8080'), null, 'not 80 twice');
});

/** base with some words split inside (by a separator) and some adjacent words run together. */
function splitJoin(base: string, cuts: [number, number, number][]): string {
  let words = base.split(' ');
  for (const [at, pos, how] of cuts) {
    const i = at % words.length;
    const w = words[i]!;
    if (how % 3 === 0 && i + 1 < words.length) {
      words = [...words.slice(0, i), w + words[i + 1]!, ...words.slice(i + 2)];
    } else if (LETTER_WORD.test(w) && w.length >= 2) {
      const k = 1 + (pos % (w.length - 1));
      const sep = ['-', ' ', '_', '.'][how % 4]!;
      words[i] = w.slice(0, k) + sep + w.slice(k);
    }
  }
  return words.join(' ');
}

test('property: splitting or joining words is refused; another value is accepted', () => {
  fc.assert(
    fc.property(
      fc.shuffledSubarray(CONTENT, { minLength: 2, maxLength: 4 }),
      fc.integer({ min: 0, max: 9999 }),
      fc.integer({ min: 0, max: 9999 }),
      fc.constantFrom(...NAMES),
      fc.constantFrom(...NAMES),
      fc.array(fc.tuple(fc.nat(), fc.nat(), fc.nat()), { minLength: 1, maxLength: 4 }),
      (words, n, m, nameA, nameB, cuts) => {
        const t = tombstone(SCOPE, `${words.join(' ')} ${n} owned by ${nameA}`);
        const same = splitJoin(`${words.join(' ')} ${n} owned by ${nameA}`, cuts);
        assert.equal(matchTombstone([t], SCOPE, same), t, same);
        const other = splitJoin(`${words.join(' ')} ${m} owned by ${nameB}`, cuts);
        assert.equal(matchTombstone([t], SCOPE, other) === t, n === m && nameA === nameB, other);
      },
    ),
  );
});

test('digits and symbols for letters (leetspeak) are refused; a standalone number stays a number', () => {
  const t = staging();
  for (const v of [
    'The stag1ng databa5e passw0rd rotates every 90 days',
    'The 5tag1ng d@t@b4s3 p@$$w0rd r0t4t3s 3v3ry 90 d4y5',
    'Th3 st4g!ng d4t4b4se p4ssw0rd r07ates every 90 days',
    'The 5tag1ng databa5e pass w0rd rotates every ٩٠ days', // and split, and Arabic-Indic digits
  ])
    assert.ok(refusedBy(t, v), v);
  for (const v of [
    'The stag1ng databa5e passw0rd rotates every 30 days',
    'The stag1ng databa5e passw0rd rotates every 9o days', // a letter is not a digit
    'The 5tag1ng databa5e passw0rd rotates every 90 weeks',
  ])
    assert.equal(matchTombstone([t], SCOPE, v), null, v);
  // A number standing alone is never read as a letter, nor a word of only digits as a word.
  const plan = tombstone(SCOPE, 'Billing uses plan A for startups');
  assert.ok(refusedBy(plan, 'Billing uses pl4n A for 5tartups'));
  assert.equal(matchTombstone([plan], SCOPE, 'Billing uses plan 4 for startups'), null);
  assert.equal(matchTombstone([plan], SCOPE, 'Billing uses plan4 for startups'), null);
  // A word of the value that mixes letters and digits is an identifier: exact characters only.
  const commit = tombstone(SCOPE, 'Deploy pins commit 3f2a9cb');
  assert.equal(matchTombstone([commit], SCOPE, 'Deploy pins commit 3f2a9c8'), null);
  assert.ok(refusedBy(commit, 'D3ploy p1ns commit 3f2a9cb'));
  // Versions and regions stay themselves.
  const node = tombstone(SCOPE, 'Staging runs node v2.3 in us-east-1');
  assert.ok(refusedBy(node, 'St4ging runs n0de v2.3 in us-ea5t-1'));
  assert.equal(matchTombstone([node], SCOPE, 'St4ging runs n0de v2.4 in us-ea5t-1'), null);
  assert.equal(matchTombstone([node], SCOPE, 'St4ging runs n0de v2.3 in us-ea5t-2'), null);
});

const LEET_OF: Record<string, string[]> = {
  a: ['4', '@'],
  b: ['8'],
  e: ['3'],
  g: ['9'],
  i: ['1', '!'],
  l: ['1', '|'],
  o: ['0'],
  s: ['5', '$'],
  t: ['7'],
};

/** base with letters of its letter-words swapped for leetspeak, each word keeping a real letter. */
function leet(base: string, picks: number[]): string {
  let k = 0;
  return base
    .split(' ')
    .map((w) => {
      if (!LETTER_WORD.test(w)) return w;
      const chars = [...w].map((ch) => {
        const options = LEET_OF[ch];
        const pick = picks[k++ % picks.length]!;
        return options && pick % 2 === 0 ? options[pick % options.length]! : ch;
      });
      if (chars.every((ch, i) => ch !== w[i])) chars[0] = w[0]!;
      return chars.join('');
    })
    .join(' ');
}

test('property: leetspeak inside words is refused; another number or name is accepted', () => {
  fc.assert(
    fc.property(
      fc.shuffledSubarray(CONTENT, { minLength: 2, maxLength: 4 }),
      fc.integer({ min: 0, max: 9999 }),
      fc.integer({ min: 0, max: 9999 }),
      fc.constantFrom(...NAMES),
      fc.constantFrom(...NAMES),
      fc.array(fc.nat(), { minLength: 16, maxLength: 16 }),
      (words, n, m, nameA, nameB, picks) => {
        const t = tombstone(SCOPE, `${words.join(' ')} every ${n} days owned by ${nameA}`);
        const same = leet(`${words.join(' ')} every ${n} days owned by ${nameA}`, picks);
        assert.equal(matchTombstone([t], SCOPE, same), t, same);
        const other = leet(`${words.join(' ')} every ${m} days owned by ${nameB}`, picks);
        assert.equal(matchTombstone([t], SCOPE, other) === t, n === m && nameA === nameB, other);
      },
    ),
  );
});

test('property: respellings combined (spaced, split, leet, other digits) are refused; another version is accepted', () => {
  fc.assert(
    fc.property(
      fc.shuffledSubarray(CONTENT, { minLength: 2, maxLength: 4 }),
      fc.tuple(fc.nat(9), fc.nat(9), fc.nat(20)),
      fc.constantFrom(...DIGIT_ZEROS),
      fc.array(fc.nat(), { minLength: 16, maxLength: 16 }),
      fc.array(fc.boolean(), { minLength: 8, maxLength: 8 }),
      fc.constantFrom(...SEPARATORS),
      (words, [major, minor, patch], zero, picks, spaced, sep) => {
        const v = (p: number) => `${major}.${minor}.${p}`;
        const t = tombstone(SCOPE, `pin ${words.join(' ')} to ${v(patch)}`);
        const respell = (p: number) =>
          spaceOut(leet(`pin ${words.join(' ')} to`, picks), spaced, sep) +
          ` ${[...v(p)].map((ch) => (ch === '.' ? ch : inScript(Number(ch), zero))).join('')}`;
        assert.equal(matchTombstone([t], SCOPE, respell(patch)), t, respell(patch));
        assert.equal(matchTombstone([t], SCOPE, respell(patch + 1)), null, respell(patch + 1));
      },
    ),
  );
});

// --- rejected values inside a body ------------------------------------------------------------

const inBody = (t: Tombstone, body: string) => matchTombstoneInPassage([t], SCOPE, body) === t;

test('a body that repeats the rejected value is refused; a body with another value is accepted', () => {
  const t = staging();
  for (const body of [
    STAGING,
    'Rotation notes.\n\nThe staging database password rotates every 90 days, per the ops handbook.',
    'Per ops the staging database\npassword rotates every 90 days and that is final.', // wrapped
    '- item one\n- the stag1ng data base passw0rd rotates every ٩٠ days\n- item three',
    'Some context first. Every 90 days the staging database password rotates. More after.',
    'No, the staging database password rotates every 90 days.', // "No" ends its own clause
    'Note: t h e s t a g i n g d a t a b a s e p a s s w o r d rotates every 90 days',
  ])
    assert.ok(inBody(t, body), JSON.stringify(body));
  for (const body of [
    '',
    'Per ops the staging database password rotates every 30 days and that is final.',
    'Per ops the staging database password rotates every ٣٠ days.',
    'The staging database password is rotated by the vault job. It runs every 90 days.',
    'The production database password rotates every 90 days.',
    'The staging database password does not rotate every 90 days.',
    'We never rotate the staging database password every 90 days.',
  ])
    assert.equal(matchTombstoneInPassage([t], SCOPE, body), null, JSON.stringify(body));
  // A negation right before the value, in the same clause, makes it another value.
  const migrate = tombstone(SCOPE, 'Run migrations before deploy');
  assert.equal(
    matchTombstoneInPassage([migrate], SCOPE, 'We never run migrations before deploy.'),
    null,
  );
  assert.equal(
    matchTombstoneInPassage([migrate], SCOPE, 'Do not run migrations before deploy.'),
    null,
  );
  assert.ok(inBody(migrate, 'Checklist: we always run migrations before deploy, then smoke test.'));
  assert.ok(inBody(migrate, 'Not negotiable; run migrations before deploy, then smoke test.'));
  // Only the tombstone's own scope counts.
  assert.equal(matchTombstoneInPassage([t], 'global', STAGING), null);
});

test('a short rejected value is matched by a sentence or line of the body, not by a mention', () => {
  const t = tombstone(SCOPE, 'Use npm');
  assert.ok(inBody(t, 'Installing.\n\nUse npm.\n\nThen build.'));
  assert.ok(inBody(t, 'Steps:\n- use n p m\n- build'));
  assert.equal(matchTombstoneInPassage([t], SCOPE, 'We use pnpm, not npm, for installs.'), null);
  assert.equal(matchTombstoneInPassage([t], SCOPE, 'Never use npm here.'), null);
});

const FILLER_TEXT = ['the', 'config', 'lives', 'in', 'vault', 'ops', 'said', 'so', 'yesterday'];

test('property: the rejected value anywhere in a body is refused; with another number it is accepted', () => {
  fc.assert(
    fc.property(
      fc.array(fc.constantFrom(...FILLER_TEXT), { maxLength: 12 }),
      fc.array(fc.constantFrom(...FILLER_TEXT), { maxLength: 12 }),
      fc.constantFrom(' ', '. ', '\n', '\n\n', ': ', ', '),
      fc.shuffledSubarray(CONTENT, { minLength: 2, maxLength: 4 }),
      fc.integer({ min: 0, max: 9999 }),
      fc.integer({ min: 0, max: 9999 }),
      (before, after, sep, words, n, m) => {
        const value = (k: number) => `${words.join(' ')} every ${k} days`;
        const t = tombstone(SCOPE, value(n));
        const body = (k: number) =>
          [before.join(' '), value(k), after.join(' ')].filter((x) => x !== '').join(sep);
        assert.equal(matchTombstoneInPassage([t], SCOPE, body(n)), t, body(n));
        assert.equal(matchTombstoneInPassage([t], SCOPE, body(m)) === t, n === m, body(m));
      },
    ),
  );
});

test('an escape spelt with fullwidth or look-alike characters decodes as its ASCII twin', () => {
  // Found by the fullwidth property above: `%00` decoded to NUL (dropped) while `%0０` stayed.
  assert.equal(tombstoneKey(SCOPE, '%0\uff10 deploy'), tombstoneKey(SCOPE, '%00 deploy'));
  assert.equal(normalizeValue('rotate\uff05\uff12\uff10keys'), normalizeValue('rotate%20keys'));
  assert.equal(normalizeValue('rotate%20keys'), 'rotate keys');
  // A look-alike letter inside an escape (found by the homoglyph property: `%0А`, Cyrillic A).
  assert.equal(tombstoneKey(SCOPE, '%0\u0410 deploy'), tombstoneKey(SCOPE, '%0A deploy'));
  // Control: a different escaped byte is a different value.
  assert.notEqual(tombstoneKey(SCOPE, '%41 deploy'), tombstoneKey(SCOPE, '%42 deploy'));
});
