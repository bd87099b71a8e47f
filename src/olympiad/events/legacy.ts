import type { EventDraft } from "./events.js";

/** The five events of the legacy family (old systems and formats kept alive), in published order; ids are stable. */
export const LEGACY_EVENTS: readonly EventDraft[] = [
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
