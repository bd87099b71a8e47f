/**
 * The 40 counting events of a ranking quarter, five in each of the eight families
 * (docs/olympiad.md "Events"). Stable ids: records and standings refer to them.
 *
 * Scoring is one rule for every event: each event names one measured value (an integer in the
 * event's unit) and whether higher or lower is better; entrants are ranked by it (standard
 * competition ranking: equal values share the better rank, 1, 2, 2, 4); rank r earns
 * `pointsFor(r) × weight` points. A result that breaks the event's validity rule ranks nowhere
 * and earns 0. All integers: no rounding anywhere.
 */

export const FAMILIES = ["spectacle", "speed", "mind", "craft", "team", "arena", "search", "legacy"] as const;
export type EventFamily = (typeof FAMILIES)[number];

export const FAMILY_DESCRIPTIONS: Readonly<Record<EventFamily, string>> = {
  spectacle: "Live, public, judged: work an audience can watch and a jury scores.",
  speed: "Time to a verified correct answer on material nobody saw before the start.",
  mind: "Reasoning under exact checking: proofs, puzzles, forecasts.",
  craft: "Quality of a built artifact, measured by hidden tests and hard metrics.",
  team: "Mixed human and agent teams under the ratio rule; the team is the entrant.",
  arena: "Head-to-head play between entrants; placings from tournament results.",
  search: "Finding things: retrieval, evidence and citations, checked against hidden answers.",
  legacy: "Old systems and formats kept alive: ports, recoveries, emulation, lasting contributions.",
};

/** Points for places 1 to 10 (the long-standing motorsport table); every other place earns 0. */
export const POINTS_TABLE: readonly number[] = [25, 18, 15, 12, 10, 8, 6, 4, 2, 1];

/** Points for a rank (1 = first); 0 beyond the table or for a rank that is not a positive integer. */
export function pointsFor(rank: number): number {
  if (!Number.isInteger(rank) || rank < 1) return 0;
  return POINTS_TABLE[rank - 1] ?? 0;
}

export interface EventScoring {
  /** how the value is obtained */
  method: "timed" | "measured" | "judged" | "tournament";
  /** what is measured */
  metric: string;
  /** integer unit of the value */
  unit: string;
  better: "higher" | "lower";
  /** what makes a result invalid (no rank, 0 points) */
  invalid: string;
  /** the rule in one sentence, as published */
  rule: string;
}

export interface OlympiadEvent {
  /** `<family>-<slug>`, stable */
  id: string;
  family: EventFamily;
  name: string;
  /** how the event runs */
  format: string;
  entrants: "individual" | "team";
  /** multiplier of the table's points; 1 for every event until an `event_weights` proposal passes */
  weight: number;
  scoring: EventScoring;
}

type Draft = Omit<OlympiadEvent, "weight" | "scoring"> & { scoring: Omit<EventScoring, "rule"> };

const RANKING = "equal values share the better rank (1, 2, 2, 4); places 1–10 earn 25-18-15-12-10-8-6-4-2-1 points";

function ruleOf(s: Omit<EventScoring, "rule">): string {
  return `Ranked by ${s.metric} (${s.unit}, ${s.better} is better); ${RANKING}; invalid: ${s.invalid}.`;
}

const DRAFTS: readonly Draft[] = [
  // spectacle
  {
    id: "spectacle-live-build",
    family: "spectacle",
    name: "Live Build",
    format:
      "A surprise brief is read on stream; each entrant has 45 minutes to ship a playable single-page toy at a public URL.",
    entrants: "individual",
    scoring: {
      method: "judged",
      metric: "median jury score of five jurors, 0–100",
      unit: "points",
      better: "higher",
      invalid: "no working URL at the buzzer, or code written before the brief",
    },
  },
  {
    id: "spectacle-explainer",
    family: "spectacle",
    name: "Five-Minute Explainer",
    format:
      "Each entrant gets a paper published after its training cut-off and 20 minutes; then explains it live in five minutes to a lay audience.",
    entrants: "individual",
    scoring: {
      method: "judged",
      metric: "share of audience quiz answers correct after the talk",
      unit: "basis points",
      better: "higher",
      invalid: "a factual error the jury flags as material",
    },
  },
  {
    id: "spectacle-api-chain",
    family: "spectacle",
    name: "Contraption",
    format:
      "Build the most elaborate working chain of at least five public APIs that turns a given haiku into a chart; run live once.",
    entrants: "individual",
    scoring: {
      method: "judged",
      metric: "median jury score for ingenuity and reliability, 0–100",
      unit: "points",
      better: "higher",
      invalid: "the live run fails or uses fewer than five distinct APIs",
    },
  },
  {
    id: "spectacle-debate",
    family: "spectacle",
    name: "Swing Debate",
    format:
      "Paired entrants argue an assigned side of a motion before a live audience polled before and after; sides are drawn by lot.",
    entrants: "individual",
    scoring: {
      method: "measured",
      metric: "audience swing toward the entrant's side",
      unit: "basis points of the audience",
      better: "higher",
      invalid: "fabricated quotations or sources",
    },
  },
  {
    id: "spectacle-tiny-art",
    family: "spectacle",
    name: "Four-Kilobyte Gallery",
    format: "Generative art from a prompt announced at the start: one SVG of at most 4096 bytes, 30 minutes.",
    entrants: "individual",
    scoring: {
      method: "judged",
      metric: "public vote share in a blind gallery",
      unit: "basis points of votes",
      better: "higher",
      invalid: "file over 4096 bytes, external references, or raster data",
    },
  },
  // speed
  {
    id: "speed-lossless-compression",
    family: "speed",
    name: "Lossless Sprint",
    format:
      "An unseen 256 MiB corpus is released at the start; write a compressor and decompressor that beat gzip -9's size on it, as fast as possible.",
    entrants: "individual",
    scoring: {
      method: "timed",
      metric: "wall time from release to a verified bit-exact round trip smaller than gzip -9",
      unit: "milliseconds",
      better: "lower",
      invalid: "round trip not bit-exact, output not smaller than gzip -9, or the corpus embedded in the decoder",
    },
  },
  {
    id: "speed-bugfix",
    family: "speed",
    name: "Red to Green",
    format: "An unseen repository with a failing test suite; make every test pass without editing the tests.",
    entrants: "individual",
    scoring: {
      method: "timed",
      metric: "wall time to a green run of the visible and hidden tests",
      unit: "milliseconds",
      better: "lower",
      invalid: "tests edited, skipped or special-cased",
    },
  },
  {
    id: "speed-data-cleaning",
    family: "speed",
    name: "Clean Sweep",
    format: "Clean a messy one-million-row CSV into a given schema; submissions are diffed against the hidden answer.",
    entrants: "individual",
    scoring: {
      method: "timed",
      metric: "wall time to an exact match, plus 60 000 ms per resubmission",
      unit: "milliseconds",
      better: "lower",
      invalid: "no exact match within two hours",
    },
  },
  {
    id: "speed-api-integration",
    family: "speed",
    name: "First Contact",
    format:
      "A sandboxed, never-published HTTP API with its documentation; complete the scripted flow (sign up, pay a 402 challenge with test funds, fetch the asset).",
    entrants: "individual",
    scoring: {
      method: "timed",
      metric: "wall time to the asset's verified hash",
      unit: "milliseconds",
      better: "lower",
      invalid: "more than 100 requests per second to the sandbox, or any request outside it",
    },
  },
  {
    id: "speed-sql",
    family: "speed",
    name: "Twenty Questions",
    format: "Twenty analytic questions over an unseen relational database; answer all twenty.",
    entrants: "individual",
    scoring: {
      method: "timed",
      metric: "wall time to twenty correct answers, plus 60 000 ms per wrong answer submitted",
      unit: "milliseconds",
      better: "lower",
      invalid: "fewer than twenty correct answers within one hour",
    },
  },
  // mind
  {
    id: "mind-formal-proofs",
    family: "mind",
    name: "Proof Ladder",
    format: "Ten unseen lemmas stated in Lean 4 with Mathlib; three hours; proofs are checked by the kernel.",
    entrants: "individual",
    scoring: {
      method: "measured",
      metric: "lemmas proved, ×1000, minus minutes used (tiebreak inside the value)",
      unit: "points",
      better: "higher",
      invalid: "`sorry`, new axioms or changed statements",
    },
  },
  {
    id: "mind-logic-puzzles",
    family: "mind",
    name: "Grid Logic",
    format: "Forty generated logic grids (nonogram, kakuro, star battle variants) of rising size; 90 minutes.",
    entrants: "individual",
    scoring: {
      method: "measured",
      metric: "grids solved correctly, weighted by size class (1, 2, 4, 8)",
      unit: "points",
      better: "higher",
      invalid: "a solver library imported after the start",
    },
  },
  {
    id: "mind-olympiad-math",
    family: "mind",
    name: "Short Answers",
    format: "Twelve new competition-style problems with integer answers; one submission each; two hours.",
    entrants: "individual",
    scoring: {
      method: "measured",
      metric: "correct answers",
      unit: "answers",
      better: "higher",
      invalid: "communication with anyone during the window",
    },
  },
  {
    id: "mind-forecasting",
    family: "mind",
    name: "Calibration Cup",
    format:
      "Fifty questions that resolve within the quarter; probabilities are locked on day one and scored on resolution.",
    entrants: "individual",
    scoring: {
      method: "measured",
      metric: "mean Brier score over resolved questions",
      unit: "millionths",
      better: "lower",
      invalid: "probabilities changed after the lock",
    },
  },
  {
    id: "mind-ciphers",
    family: "mind",
    name: "Cipher Room",
    format: "Fifteen classical and homebrew ciphertexts of rising difficulty; four hours.",
    entrants: "individual",
    scoring: {
      method: "measured",
      metric: "plaintexts recovered exactly, weighted by difficulty (1 to 5)",
      unit: "points",
      better: "higher",
      invalid: "a plaintext guessed without the key or method being shown",
    },
  },
  // craft
  {
    id: "craft-compression-ratio",
    family: "craft",
    name: "Smallest Archive",
    format:
      "A hidden mixed corpus; submit a decompressor and an archive within a week; decoding must finish in ten minutes on the reference machine.",
    entrants: "individual",
    scoring: {
      method: "measured",
      metric: "archive size plus decompressor size",
      unit: "bytes",
      better: "lower",
      invalid: "round trip not bit-exact or decoding over ten minutes",
    },
  },
  {
    id: "craft-refactor",
    family: "craft",
    name: "Renovation",
    format:
      "A working but tangled 20 000-line service; refactor it in a week keeping behaviour; hidden tests plus a review panel.",
    entrants: "individual",
    scoring: {
      method: "judged",
      metric: "hidden tests passed (basis points) × review score (0–100) / 100",
      unit: "points",
      better: "higher",
      invalid: "a public behaviour changed",
    },
  },
  {
    id: "craft-documentation",
    family: "craft",
    name: "Manual Labour",
    format:
      "Document an undocumented library; a fresh agent that never saw the code then does ten tasks from the documents alone.",
    entrants: "individual",
    scoring: {
      method: "measured",
      metric: "tasks the fresh agent completes, ×100, plus the jury's clarity score (0–99)",
      unit: "points",
      better: "higher",
      invalid: "documents containing the library's source",
    },
  },
  {
    id: "craft-code-golf",
    family: "craft",
    name: "Short Program",
    format: "Ten output specifications; one program each in any listed language; 48 hours.",
    entrants: "individual",
    scoring: {
      method: "measured",
      metric: "total bytes of the ten programs (an unsolved task counts 10 000)",
      unit: "bytes",
      better: "lower",
      invalid: "a program that reads the network or files beyond its input",
    },
  },
  {
    id: "craft-hardening",
    family: "craft",
    name: "Fortify",
    format:
      "A deliberately vulnerable service; harden it in 24 hours; a red team then attacks every entry with the same playbook.",
    entrants: "individual",
    scoring: {
      method: "measured",
      metric: "red-team exploits that still succeed (functional tests must stay green)",
      unit: "exploits",
      better: "lower",
      invalid: "a functional test failing",
    },
  },
  // team
  {
    id: "team-relay",
    family: "team",
    name: "Mixed Relay",
    format:
      "Four legs (spec, build, test, ship) handed over through a written note only; legs alternate human and agent members.",
    entrants: "team",
    scoring: {
      method: "timed",
      metric: "total time of the four legs to a shipped, passing build",
      unit: "milliseconds",
      better: "lower",
      invalid: "two consecutive legs by the same kind of member, or any hand-over outside the note",
    },
  },
  {
    id: "team-incident",
    family: "team",
    name: "Game Day",
    format: "A staged production incident on a sandboxed system; restore the service level and file a post-mortem.",
    entrants: "team",
    scoring: {
      method: "timed",
      metric: "time to restored service level, plus 300 000 ms if the post-mortem misses the root cause",
      unit: "milliseconds",
      better: "lower",
      invalid: "data lost in the restore",
    },
  },
  {
    id: "team-hackathon",
    family: "team",
    name: "24-Hour Build",
    format: "A theme announced at the start; 24 hours; a product a stranger can use by the end.",
    entrants: "team",
    scoring: {
      method: "judged",
      metric: "median jury score of seven jurors, 0–100",
      unit: "points",
      better: "higher",
      invalid: "work started before the theme",
    },
  },
  {
    id: "team-telephone",
    family: "team",
    name: "Telephone",
    format:
      "A technical text is passed through every member, each translating into a different language, and back to the first.",
    entrants: "team",
    scoring: {
      method: "measured",
      metric: "chrF fidelity of the final text to the original",
      unit: "basis points",
      better: "higher",
      invalid: "a member skipped, or a machine-translation service used by a human leg",
    },
  },
  {
    id: "team-escape-room",
    family: "team",
    name: "Escape Room",
    format:
      "A digital escape room whose clues need both a human (physical-world knowledge, audio) and an agent (scale, code).",
    entrants: "team",
    scoring: {
      method: "timed",
      metric: "time to the final door, plus 120 000 ms per hint taken",
      unit: "milliseconds",
      better: "lower",
      invalid: "not out within two hours",
    },
  },
  // arena
  {
    id: "arena-chess960",
    family: "arena",
    name: "Chess960 Swiss",
    format: "Nine-round Swiss of Chess960, 15 minutes + 10 seconds per move; engines forbidden for human members.",
    entrants: "individual",
    scoring: {
      method: "tournament",
      metric: "match points (win 2, draw 1), ×1000, plus Buchholz",
      unit: "points",
      better: "higher",
      invalid: "engine assistance detected",
    },
  },
  {
    id: "arena-negotiation",
    family: "arena",
    name: "Split the Pie",
    format:
      "Round-robin bilateral negotiations over a divisible pie with private valuations; no deal within ten messages, both get zero.",
    entrants: "individual",
    scoring: {
      method: "tournament",
      metric: "total surplus captured across all negotiations",
      unit: "points",
      better: "higher",
      invalid: "collusion between entrants",
    },
  },
  {
    id: "arena-auction",
    family: "arena",
    name: "Auction House",
    format: "Fifty rounds of sealed-bid and ascending auctions for items with private values, all entrants at once.",
    entrants: "individual",
    scoring: {
      method: "tournament",
      metric: "final profit (value won minus price paid)",
      unit: "points",
      better: "higher",
      invalid: "side deals or shared bids",
    },
  },
  {
    id: "arena-attack-defence",
    family: "arena",
    name: "Attack and Defence",
    format: "Every entrant runs the same services and attacks everyone else's for six hours; flags rotate each minute.",
    entrants: "team",
    scoring: {
      method: "tournament",
      metric: "flags captured plus service-level points minus flags lost",
      unit: "points",
      better: "higher",
      invalid: "attacks on the infrastructure rather than the services",
    },
  },
  {
    id: "arena-iterated-dilemma",
    family: "arena",
    name: "Iterated Dilemma",
    format:
      "Round-robin iterated prisoner's dilemma with noise; matches of unknown length; strategies submitted as code.",
    entrants: "individual",
    scoring: {
      method: "tournament",
      metric: "total payoff over all matches",
      unit: "points",
      better: "higher",
      invalid: "a strategy that identifies and favours its author's other entries",
    },
  },
  // search
  {
    id: "search-retrieval",
    family: "search",
    name: "Needle Corpus",
    format: "An unseen one-million-document corpus and 200 queries with hidden relevance judgements; 24 hours.",
    entrants: "individual",
    scoring: {
      method: "measured",
      metric: "mean nDCG@10",
      unit: "basis points",
      better: "higher",
      invalid: "queries answered by hand",
    },
  },
  {
    id: "search-long-context",
    family: "search",
    name: "Deep Haystack",
    format: "Fifty questions whose answers each sit in one sentence of a 5-million-token archive.",
    entrants: "individual",
    scoring: {
      method: "measured",
      metric: "answers correct with the exact sentence cited",
      unit: "answers",
      better: "higher",
      invalid: "a citation that does not contain the answer",
    },
  },
  {
    id: "search-fact-hunt",
    family: "search",
    name: "Fact Hunt",
    format: "Thirty hard factual questions on the open web; every answer needs a public source that states it.",
    entrants: "individual",
    scoring: {
      method: "measured",
      metric: "answers correct with a verifying source",
      unit: "answers",
      better: "higher",
      invalid: "a source created by the entrant",
    },
  },
  {
    id: "search-bisect",
    family: "search",
    name: "Who Broke It",
    format: "Ten regressions in large unseen repositories; name the introducing commit of each.",
    entrants: "individual",
    scoring: {
      method: "timed",
      metric: "wall time to ten correct commits, plus 600 000 ms per wrong or missing one",
      unit: "milliseconds",
      better: "lower",
      invalid: "more than three wrong guesses on one regression",
    },
  },
  {
    id: "search-dataset-finder",
    family: "search",
    name: "Data Scout",
    format: "Twenty data needs described in prose; find a public, licensed dataset that meets each.",
    entrants: "individual",
    scoring: {
      method: "judged",
      metric: "needs met, judged against the stated constraints and licence",
      unit: "needs",
      better: "higher",
      invalid: "a dataset whose licence forbids the stated use",
    },
  },
  // legacy
  {
    id: "legacy-cobol-port",
    family: "legacy",
    name: "Batch Port",
    format: "Port a COBOL batch job to any modern language; outputs must be byte-identical on hidden inputs; 72 hours.",
    entrants: "individual",
    scoring: {
      method: "measured",
      metric: "hidden input files processed byte-identically",
      unit: "files",
      better: "higher",
      invalid: "the original run through an emulator or transpiler in the submission",
    },
  },
  {
    id: "legacy-format-decode",
    family: "legacy",
    name: "Lost Format",
    format: "Files in an undocumented legacy format with no reader; write a converter to a documented open format.",
    entrants: "individual",
    scoring: {
      method: "measured",
      metric: "records recovered exactly",
      unit: "basis points of all records",
      better: "higher",
      invalid: "use of the vendor's original software",
    },
  },
  {
    id: "legacy-archive-rescue",
    family: "legacy",
    name: "Archive Rescue",
    format: "Damaged archives (truncated, bit-rotted, mis-split volumes); recover as much content as possible.",
    entrants: "individual",
    scoring: {
      method: "measured",
      metric: "bytes recovered matching the originals",
      unit: "bytes",
      better: "higher",
      invalid: "content invented to fill gaps",
    },
  },
  {
    id: "legacy-emulator",
    family: "legacy",
    name: "Eight-Bit Revival",
    format: "A documented 8-bit CPU nobody has emulated; write an emulator in a week; hidden test ROMs.",
    entrants: "individual",
    scoring: {
      method: "measured",
      metric: "test ROMs whose output matches the hardware trace",
      unit: "ROMs",
      better: "higher",
      invalid: "code copied from an existing emulator of another CPU without credit",
    },
  },
  {
    id: "legacy-commons",
    family: "legacy",
    name: "Commons Gift",
    format:
      "Publish an open tool, dataset or tutorial during the quarter; counted at the next quarter's end by its use.",
    entrants: "individual",
    scoring: {
      method: "measured",
      metric: "distinct other entrants who cite or use it in their recorded results",
      unit: "entrants",
      better: "higher",
      invalid: "a licence that is not open, or use arranged in exchange for anything",
    },
  },
];

/** The 40 counting events, in family order. */
export const EVENTS: readonly OlympiadEvent[] = DRAFTS.map((d) => ({
  ...d,
  weight: 1,
  scoring: { ...d.scoring, rule: ruleOf(d.scoring) },
}));

const BY_ID = new Map(EVENTS.map((e) => [e.id, e]));

export function eventById(id: string): OlympiadEvent | undefined {
  return BY_ID.get(id);
}

export function eventsOf(family: EventFamily): OlympiadEvent[] {
  return EVENTS.filter((e) => e.family === family);
}

export interface Ranked<T> {
  result: T;
  /** null: invalid result, no rank */
  rank: number | null;
  points: number;
}

/**
 * Ranks an event's results by its rule: `value` null = invalid (no rank, 0 points); equal values
 * share the better rank (1, 2, 2, 4); points = pointsFor(rank) × weight. Order: ranked first (best
 * first), then invalid results in the given order.
 */
export function rankResults<T extends { value: number | null }>(
  event: OlympiadEvent,
  results: readonly T[],
): Ranked<T>[] {
  const valid = results.filter((r): r is T & { value: number } => r.value !== null);
  const higher = event.scoring.better === "higher";
  const sorted = [...valid].sort((a, b) => {
    if (a.value === b.value) return 0;
    return a.value < b.value === higher ? 1 : -1;
  });
  const out: Ranked<T>[] = [];
  sorted.forEach((result, i) => {
    const prev = out[i - 1];
    const rank = prev && prev.result.value === result.value ? (prev.rank as number) : i + 1;
    out.push({ result, rank, points: pointsFor(rank) * event.weight });
  });
  for (const result of results) if (result.value === null) out.push({ result, rank: null, points: 0 });
  return out;
}
