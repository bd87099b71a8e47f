import { profile, route } from "../../codec/api/profile.js";
import type { DeclaredType } from "../../codec/router/profile.js";
import { type CliIO, type Command, UsageError } from "../command.js";
import { codecFailure, fmt, levelOf, parseCodecArgs, readAll } from "./compress.js";

const DECLARED = ["int32", "float32", "float64", "timestamps", "json", "csv", "text", "binary"];

const HELP = `Usage: labphi profile [FILE] [options]

Profiles FILE (or stdin): the data class read from the bytes, the codec path, the features the
router uses, and the route it would take at a level (chambers tried, label and reason). Nothing is
compressed.

Options:
  --level LEVEL   fast | balanced | max (default max): the level whose route is shown
  --type TYPE     declare the data instead of detecting it (${DECLARED.join(" | ")})
  --json          print JSON
  -h, --help      this help`;

export const profileCommand: Command = {
  name: "profile",
  summary: "Show the data class, path, features and route of a file or stdin",
  help: HELP,
  async run(args: string[], io: CliIO) {
    const a = parseCodecArgs(args, { values: ["level", "type"], flags: ["json"] });
    if (a.positional.length > 1) throw new UsageError("give at most one FILE");
    const level = levelOf(a.values.level);
    const type = a.values.type;
    if (type !== undefined && !DECLARED.includes(type))
      throw new UsageError(`--type must be one of ${DECLARED.join(", ")}`);
    const bytes = await readAll(a.positional[0], io);
    let result: { profile: ReturnType<typeof profile>; route: ReturnType<typeof route> };
    try {
      const declaredType = type as DeclaredType | undefined;
      result = {
        profile: profile(bytes, declaredType),
        route: route(bytes, { level, ...(declaredType ? { declaredType } : {}) }),
      };
    } catch (err) {
      throw codecFailure(err);
    }
    const { profile: p, route: r } = result;
    if (a.flags.has("json")) {
      io.stdout.write(
        `${JSON.stringify({ path: p.path, data_class: p.data_class, feats: p.feats, route: { level, chamber: r.chamber, candidates: r.candidates, label: r.label, reason: r.reason } }, null, 2)}\n`,
      );
      return 0;
    }
    const f = p.feats;
    const lines = [
      `bytes        ${fmt(f.bytes)}`,
      `data_class   ${p.data_class}${f.declared ? " (declared)" : ""}`,
      `path         ${p.path}`,
      `route        ${r.label} at level ${level}: tries ${r.candidates.join(", ")}`,
      `reason       ${r.reason}`,
      `entropy      ${f.h0} bits/byte (order 0)`,
      `utf8         ${f.utf8 ? "yes" : "no"}, ${Math.round(f.printable * 100)}% printable${f.json ? ", JSON" : ""}${f.csv ? ", CSV" : ""}`,
      `magic        ${f.magic ?? "none"}`,
      `int32        ${Math.round(f.int32Small * 100)}% within ±2^24, ${Math.round(f.monotonic * 100)}% non-decreasing`,
      `float        f64 ${Math.round(f.float64Plausible * 100)}% plausible (${Math.round(f.decimal * 100)}% short decimals), f32 ${Math.round(f.float32Plausible * 100)}%`,
      `stride       ${f.stride || "none"}`,
    ];
    io.stdout.write(`${lines.join("\n")}\n`);
    return 0;
  },
};
