// Tokenises MCPL examples and the library's hardware descriptions with the TextMate
// grammars of this package, as VS Code would (vscode-textmate + vscode-oniguruma),
// and checks the scopes of a few tokens that matter. Prints one JSON report line;
// exits 1 on any failure. Usage: node test/tokenize.js [files...]
"use strict";

const fs = require("fs");
const path = require("path");
const vsctm = require("vscode-textmate");
const oniguruma = require("vscode-oniguruma");

const here = path.resolve(__dirname, "..");
const root = path.resolve(here, "..", "..");

async function registry() {
  const wasm = fs.readFileSync(require.resolve("vscode-oniguruma/release/onig.wasm")).buffer;
  await oniguruma.loadWASM(wasm);
  return new vsctm.Registry({
    onigLib: Promise.resolve({
      createOnigScanner: (p) => new oniguruma.OnigScanner(p),
      createOnigString: (s) => new oniguruma.OnigString(s),
    }),
    loadGrammar: async (scope) => {
      const file = { "source.mcpl": "mcpl.tmLanguage.json", "source.hdl": "hdl.tmLanguage.json" }[scope];
      if (!file) return null;
      const p = path.join(here, "syntaxes", file);
      return vsctm.parseRawGrammar(fs.readFileSync(p, "utf8"), p);
    },
  });
}

function tokenize(grammar, text) {
  // [{line, text, scopes}] for every token of every line
  const out = [];
  let state = vsctm.INITIAL;
  text.split(/\r?\n/).forEach((line, i) => {
    const r = grammar.tokenizeLine(line, state);
    for (const t of r.tokens) {
      out.push({ line: i, text: line.slice(t.startIndex, t.endIndex), scopes: t.scopes });
    }
    state = r.ruleStack;
  });
  return out;
}

function walk(dir, ext, acc = []) {
  for (const name of fs.readdirSync(dir)) {
    const p = path.join(dir, name);
    if (fs.statSync(p).isDirectory()) walk(p, ext, acc);
    else if (ext.some((e) => p.endsWith(e))) acc.push(p);
  }
  return acc;
}

const MCPL_RESERVED = new Set(("module package export import type if else for while foreach in " +
  "return break continue barrier as const true false int long float double bool byte void").split(" "));
const HDL_RESERVED = new Set(("hardware_description specializes parallelism memory_space par_group " +
  "par_unit device_group device_unit memory cache interconnect execution_group execution_unit " +
  "simd_group simd_unit load_store_group load_store_unit instructions").split(" "));

// Expected scopes: [file (relative to the repository), token text, scope it must carry, nth occurrence]
const EXPECTATIONS = [
  ["examples/matmul/perfect.mcpl", "foreach", "keyword.control.foreach.mcpl", 0],
  ["examples/matmul/perfect.mcpl", "threads", "entity.name.type.par-group.mcpl", 0],
  ["examples/matmul/perfect.mcpl", "perfect", "entity.name.namespace.level.mcpl", 1],
  ["examples/matmul/perfect.mcpl", "matmul", "entity.name.function.mcpl", 0],
  ["examples/matmul/perfect.mcpl", "float", "storage.type.mcpl", 0],
  ["examples/matmul/perfect.mcpl", "// matmul, level perfect: the paper's Figure 2.", "comment.line.double-slash.mcpl", 0],
  ["examples/matmul/gpu.mcpl", ".hierarchy.blocks.block.threads.max_nr_units", "variable.other.property.mcpl", 0],
  ["mcl/hwdescs/gpu.hdl", "par_group", "storage.type.block.hdl", 0],
  ["mcl/hwdescs/gpu.hdl", "blocks", "entity.name.type.block.hdl", 0],
  ["mcl/hwdescs/gpu.hdl", "max_nr_units", "variable.other.property.hdl", 0],
  ["mcl/hwdescs/gpu.hdl", "specializes", "keyword.other.specializes.hdl", 0],
];

async function main() {
  const reg = await registry();
  const grammars = {
    mcpl: await reg.loadGrammar("source.mcpl"),
    hdl: await reg.loadGrammar("source.hdl"),
  };
  const files = process.argv.slice(2).length
    ? process.argv.slice(2)
    : [...walk(path.join(root, "examples"), [".mcpl", ".mcl"]), ...walk(path.join(root, "mcl", "hwdescs"), [".hdl"])];
  const failures = [];
  const tokens = {};
  let count = 0;
  for (const f of files) {
    const g = f.endsWith(".hdl") ? grammars.hdl : grammars.mcpl;
    const text = fs.readFileSync(f, "utf8");
    const toks = tokenize(g, text);
    count += toks.length;
    tokens[path.relative(root, f)] = toks;
    // Reserved words are never highlighted as plain names (outside comments).
    const reserved = f.endsWith(".hdl") ? HDL_RESERVED : MCPL_RESERVED;
    for (const t of toks) {
      if (reserved.has(t.text) && !t.scopes.some((s) => s.startsWith("comment"))
          && t.scopes.every((s) => s === t.scopes[0] || s.startsWith("variable.other"))) {
        failures.push(`${f}:${t.line + 1}: reserved word '${t.text}' highlighted as a name`);
      }
    }
  }
  for (const [file, text, scope, nth] of EXPECTATIONS) {
    const toks = tokens[file];
    if (!toks) continue; // not among the files asked for
    const hits = toks.filter((t) => t.text === text);
    if (hits.length <= nth) {
      failures.push(`${file}: no token '${text}' (#${nth})`);
    } else if (!hits[nth].scopes.includes(scope)) {
      failures.push(`${file}: '${text}' has scopes ${hits[nth].scopes.join(" ")}, expected ${scope}`);
    }
  }
  console.log(JSON.stringify({ files: files.length, tokens: count, failures }));
  process.exit(failures.length ? 1 : 0);
}

main().catch((e) => {
  console.log(JSON.stringify({ files: 0, tokens: 0, failures: [String(e && e.stack || e)] }));
  process.exit(1);
});
