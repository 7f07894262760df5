import { describe, expect, it } from "vitest";
import {
  TemplateSyntaxError,
  TemplateUnresolvedError,
  addStepResult,
  evaluate,
  isMultiValued,
  conditionTruthy,
  isTruthy,
  newTemplateContext,
  parseTemplate,
  resolveTemplates,
  stepReference,
  toText,
  type TemplateContext,
} from "./templates";

/** A context whose `step[i].data` is `data[i]`, with ids `ids[i]` (default: the index). */
function ctx(
  data: unknown[],
  extra: Partial<TemplateContext> & { ids?: string[] } = {},
): TemplateContext {
  const { ids, ...rest } = extra;
  const results = data.map((d) => ({ success: true, tool: "http", data: d }));
  const steps: Record<string, unknown> = {};
  results.forEach((r, i) => (steps[ids?.[i] ?? String(i)] = r));
  return { step: results, steps, input: null, run: { id: "run-1", name: null }, ...rest };
}

const resolve = (template: unknown, c: TemplateContext) => resolveTemplates(template, c);

// The seed document's "Template Resolution Examples".
const facilities = [
  { id: "F1", name: "Berlin Plant" },
  { id: "F2", name: "Munich Center" },
];
const shipments = [
  { id: "S1", facility_id: "F1" },
  { id: "S2", facility_id: "F2" },
  { id: "S3", facility_id: "F1" },
];
const nested = [{ id: "S1", facility: { id: "F1", location: { city: "Berlin" } } }];
const nestedMany = [
  { id: "S1", facility: { id: "F1", name: "Plant A" } },
  { id: "S2", facility: { id: "F2", name: "Plant B" } },
  { id: "S3", facility: { id: "F1", name: "Plant A" } },
];

describe("seed examples", () => {
  it("example 1: single field reference", () => {
    expect(resolve("${step[0].data[0].id}", ctx([facilities]))).toBe("F1");
  });

  it("example 2: a wildcard gives an array", () => {
    expect(resolve("${step[0].data.*.id}", ctx([shipments]))).toEqual(["S1", "S2", "S3"]);
  });

  it("example 2: the wildcard joined inside a string", () => {
    expect(resolve("ids=${step[0].data.*.id}", ctx([shipments]))).toBe("ids=S1,S2,S3");
  });

  it("example 3: nested field access", () => {
    expect(resolve("${step[0].data[0].facility.location.city}", ctx([nested]))).toBe("Berlin");
  });

  it("example 4: wildcard of nested fields keeps duplicates and order", () => {
    expect(resolve("${step[0].data.*.facility.id}", ctx([nestedMany]))).toEqual(["F1", "F2", "F1"]);
  });
});

describe("whole-string templates keep the JSON type", () => {
  const c = ctx([
    { n: 42, f: 1.5, obj: { a: 1, b: [2] }, yes: true, no: false, nothing: null, list: [1, 2] },
  ]);

  it("number", () => {
    expect(resolve("${step[0].data.n}", c)).toBe(42);
    expect(resolve("${step[0].data.f}", c)).toBe(1.5);
  });

  it("object", () => {
    expect(resolve("${step[0].data.obj}", c)).toEqual({ a: 1, b: [2] });
  });

  it("booleans, false included", () => {
    expect(resolve("${step[0].data.yes}", c)).toBe(true);
    expect(resolve("${step[0].data.no}", c)).toBe(false);
  });

  it("null is a value, not unresolved", () => {
    expect(resolve("${step[0].data.nothing}", c)).toBeNull();
  });

  it("an array reached without a wildcard is the array itself", () => {
    expect(resolve("${step[0].data.list}", c)).toEqual([1, 2]);
  });

  it("whitespace inside the braces is ignored", () => {
    expect(resolve("${ step[0].data.n }", c)).toBe(42);
  });

  it("text around a single template makes it a string", () => {
    expect(resolve(" ${step[0].data.n}", c)).toBe(" 42");
  });
});

describe("templates inside longer strings", () => {
  const c = ctx([{ n: 3, obj: { a: 1 }, yes: true, objs: [{ a: 1 }, { b: 2 }] }], {
    input: { city: "Berlin" },
  });

  it("interpolates scalars as text", () => {
    expect(resolve("n=${step[0].data.n}&ok=${step[0].data.yes}", c)).toBe("n=3&ok=true");
  });

  it("embeds objects as JSON", () => {
    expect(resolve("filter=${step[0].data.obj}", c)).toBe('filter={"a":1}');
  });

  it("joins arrays of objects as JSON separated by commas", () => {
    expect(resolve("x=${step[0].data.objs}", c)).toBe('x={"a":1},{"b":2}');
  });

  it("keeps the literal text between several templates", () => {
    expect(resolve("${input.city}/${step[0].data.n}/end", c)).toBe("Berlin/3/end");
  });

  it("an empty wildcard embeds as nothing", () => {
    expect(resolve("ids=[${step[0].data.missing.*}]", c)).toBe("ids=[]");
  });
});

describe("empty and unresolved paths", () => {
  it("a wildcard that matches nothing gives []", () => {
    expect(resolve("${step[0].data.*.id}", ctx([[]]))).toEqual([]);
  });

  it("a recursive descent that matches nothing gives []", () => {
    expect(resolve("${step[0].data..zzz}", ctx([{ a: 1 }]))).toEqual([]);
  });

  it("a path without wildcard that matches nothing throws TemplateUnresolvedError", () => {
    expect(() => resolve("${step[0].data[5].id}", ctx([facilities]))).toThrow(
      TemplateUnresolvedError,
    );
  });

  it("the unresolved error names the path", () => {
    let caught: unknown;
    try {
      resolve("x=${steps.facilities.data.nope}", ctx([facilities], { ids: ["facilities"] }));
    } catch (err) {
      caught = err;
    }
    expect(caught).toBeInstanceOf(TemplateUnresolvedError);
    expect((caught as TemplateUnresolvedError).expr).toBe("steps.facilities.data.nope");
    expect((caught as Error).message).toContain("steps.facilities.data.nope");
  });

  it("a missing input field is unresolved", () => {
    expect(() => resolve("${input.city}", ctx([], { input: {} }))).toThrow(TemplateUnresolvedError);
  });

  it("a step result that is absent from a sparse context is unresolved", () => {
    const c: TemplateContext = { step: {}, steps: {}, input: null, run: { id: "r", name: null } };
    expect(() => resolve("${step[1].data}", c)).toThrow(TemplateUnresolvedError);
  });
});

describe("context roots", () => {
  it("steps.<id> reads a result by id", () => {
    const c = ctx([facilities, shipments], { ids: ["facilities", "shipments"] });
    expect(resolve("${steps.shipments.data.*.id}", c)).toEqual(["S1", "S2", "S3"]);
    expect(resolve("${steps.facilities.data[1].name}", c)).toBe("Munich Center");
  });

  it("steps['<id>'] reads an id containing dots", () => {
    const c = ctx([facilities], { ids: ["geo.facilities"] });
    expect(resolve("${steps['geo.facilities'].data[0].id}", c)).toBe("F1");
  });

  it("step[N] reads by plan index", () => {
    const c = ctx([facilities, shipments]);
    expect(resolve("${step[1].data[2].id}", c)).toBe("S3");
  });

  it("input is the plan input", () => {
    const c = ctx([], { input: { city: "Berlin", limits: [1, 2] } });
    expect(resolve("${input.city}", c)).toBe("Berlin");
    expect(resolve("${input.limits}", c)).toEqual([1, 2]);
  });

  it("item and index inside forEach", () => {
    const c = ctx([], { item: { sku: "A-1" }, index: 0 });
    expect(resolve({ sku: "${item.sku}", n: "${index}" }, c)).toEqual({ sku: "A-1", n: 0 });
  });

  it("run exposes id and name", () => {
    const c = ctx([], { run: { id: "run-42", name: "nightly" } });
    expect(resolve("${run.name}:${run.id}", c)).toBe("nightly:run-42");
  });
});

describe("resolveTemplates walks JSON values", () => {
  const c = ctx([shipments], { input: { city: "Berlin" } });

  it("resolves strings nested in objects and arrays", () => {
    const params = { query: { location: "${input.city}", ids: ["${step[0].data[0].id}", "lit"] } };
    expect(resolve(params, c)).toEqual({ query: { location: "Berlin", ids: ["S1", "lit"] } });
  });

  it("leaves non-string values and plain strings alone", () => {
    const params = { n: 1, b: false, z: null, s: "plain $ {not} a template" };
    expect(resolve(params, c)).toEqual(params);
  });

  it("does not mutate its input", () => {
    const params = { a: "${input.city}" };
    resolve(params, c);
    expect(params.a).toBe("${input.city}");
  });
});

describe("parseTemplate", () => {
  it("a plain string is one text part", () => {
    expect(parseTemplate("hello")).toEqual([{ kind: "text", text: "hello" }]);
  });

  it("splits text and expressions", () => {
    expect(parseTemplate("a${input.x}b${ input.y }")).toEqual([
      { kind: "text", text: "a" },
      { kind: "expr", expr: "input.x" },
      { kind: "text", text: "b" },
      { kind: "expr", expr: "input.y" },
    ]);
  });

  it("a closing brace inside quotes or filters does not end the expression", () => {
    expect(parseTemplate("${steps['a}b'].data}")).toEqual([
      { kind: "expr", expr: "steps['a}b'].data" },
    ]);
    expect(parseTemplate("${step[0].data[?(@.id == 'x')]}")).toEqual([
      { kind: "expr", expr: "step[0].data[?(@.id == 'x')]" },
    ]);
  });

  it.each([
    ["unclosed ${", "id=${input.x"],
    ["empty ${}", "${}"],
    ["blank ${ }", "a${  }b"],
    ["unknown root", "${foo.bar}"],
    ["a root that is not a name", "${[0].x}"],
    ["unclosed bracket (a[)", "${input.a[}"],
    ["unclosed bracket before a brace", "${input.a[}}"],
    ["empty brackets", "${input.a[]}"],
    ["trailing dot", "${input.a.}"],
    ["trailing ..", "${input..}"],
    ["space in a path", "${input.a b}"],
    ["unclosed quote", "${steps['a}"],
    ["unclosed filter", "${step[0].data[?(@.x]}"],
  ])("rejects %s", (_name, template) => {
    expect(() => parseTemplate(template)).toThrow(TemplateSyntaxError);
  });

  it("says why a ${ whose } is there does not end", () => {
    expect(() => parseTemplate("id=${input.x")).toThrow(/^unclosed "\$\{" at offset 3$/);
    expect(() => parseTemplate("${input[[}")).toThrow(
      /^unclosed "\$\{" at offset 0: a "\[", "\(" or quote inside it is never closed/,
    );
  });

  it("reports an invalid JSONPath as such", () => {
    expect(() => parseTemplate("${input.a[]}")).toThrow(/invalid JSONPath/);
    expect(() => parseTemplate("${input.a]}")).toThrow(/unbalanced "\]"/);
  });

  it("parses filters and scripts when the plan is checked, not when a value meets them", () => {
    expect(() => parseTemplate("${input.x[?(@ >)]}")).toThrow(
      /invalid JSONPath.*Expected expression/,
    );
    expect(() => parseTemplate("${input.x[(@.length -)]}")).toThrow(/invalid JSONPath/);
    expect(() => parseTemplate("${input.x[?(@ = 1)]}")).toThrow(/"=" assigns: compare with "=="/);
    expect(() => parseTemplate("${input.x[?(@.a.b == 'x' && @.n >= 2)].id}")).not.toThrow();
    expect(() => parseTemplate("${input.x[(@.length-1)]}")).not.toThrow();
  });

  it("refuses a negative index, which jsonpath-plus reads as a key and never matches", () => {
    expect(() => parseTemplate("${input.x[-1]}")).toThrow(/a negative index matches nothing/);
    expect(() => parseTemplate("${input.x[ -2 ].id}")).toThrow(/a negative index/);
    expect(() => parseTemplate("${input.x[-1:]}")).not.toThrow();
    expect(() => parseTemplate("${input['[-1]']}")).not.toThrow();
    // Inside a filter it is the filter's own (JavaScript) expression: not this check's.
    expect(() => parseTemplate("${input.x[?(@.tags[-1] == 'a')]}")).not.toThrow();
  });

  it("names the unknown root", () => {
    expect(() => parseTemplate("${stepz[0]}")).toThrow(/unknown template root "stepz"/);
  });

  it("a second, broken template after a good one still fails", () => {
    expect(() => parseTemplate("${input.x}-${}")).toThrow(TemplateSyntaxError);
  });
});

describe("stepReference", () => {
  it("step[N] is a reference by index", () => {
    expect(stepReference("step[3].data.*.id")).toEqual({ by: "index", index: 3 });
  });

  it("step.N is a reference by index too", () => {
    expect(stepReference("step.12.data")).toEqual({ by: "index", index: 12 });
  });

  it("steps.<id> is a reference by id", () => {
    expect(stepReference("steps.facilities.data.*.id")).toEqual({ by: "id", id: "facilities" });
  });

  it("steps['<id>'] allows dots in the id", () => {
    expect(stepReference("steps['geo.v2'].data")).toEqual({ by: "id", id: "geo.v2" });
  });

  it("other roots are no reference", () => {
    expect(stepReference("input.city")).toBeNull();
    expect(stepReference("item.sku")).toBeNull();
  });

  it("steps alone or with a wildcard is a syntax error", () => {
    expect(() => stepReference("steps")).toThrow(TemplateSyntaxError);
    expect(() => stepReference("steps.*.data")).toThrow(TemplateSyntaxError);
  });

  it("step without a literal index is a syntax error", () => {
    expect(() => stepReference("step[*].data")).toThrow(TemplateSyntaxError);
    expect(() => stepReference("step.x")).toThrow(TemplateSyntaxError);
  });
});

describe("isMultiValued", () => {
  it.each([
    ["a.*.b", true],
    ["a[*]", true],
    ["a..b", true],
    ["a[?(@.x > 1)]", true],
    ["a[0,1]", true],
    ["a[0:2]", true],
    ["a[0].b", false],
    ["a.b.c", false],
    ["a['x*y']", false],
    ["a['p,q']", false],
  ])("%s -> %s", (expr, expected) => {
    expect(isMultiValued(expr)).toBe(expected);
  });
});

describe("evaluate", () => {
  it("a filter gives the matching values", () => {
    const c = ctx([shipments]);
    expect(evaluate("step[0].data[?(@.facility_id === 'F1')].id", c)).toEqual(["S1", "S3"]);
  });

  it("a slice gives an array", () => {
    expect(evaluate("step[0].data[0:2].id", ctx([shipments]))).toEqual(["S1", "S2"]);
  });
});

describe("toText", () => {
  it.each([
    ["abc", "abc"],
    [12, "12"],
    [false, "false"],
    [null, "null"],
    [["a", 1, true], "a,1,true"],
    [[["a", "b"], ["c"]], "a,b,c"],
    [{ k: "v" }, '{"k":"v"}'],
  ])("%j -> %s", (value, expected) => {
    expect(toText(value)).toBe(expected);
  });
});

describe("isTruthy", () => {
  it.each([
    [true, true],
    [1, true],
    ["yes", true],
    [[0], true],
    [{ a: 0 }, true],
    [false, false],
    [0, false],
    ["", false],
    ["false", true],
    ["0", true],
    [null, false],
    [[], false],
    [{}, false],
  ])("%j -> %s", (value, expected) => {
    expect(isTruthy(value)).toBe(expected);
  });
});

describe("conditionTruthy", () => {
  it.each([
    ["false", false],
    ["true", true],
    [false, false],
    [[], false],
    [{ a: 1 }, true],
  ])("%j -> %s", (value, expected) => {
    expect(conditionTruthy(value)).toBe(expected);
  });
});

describe("prototype-named keys and step ids", () => {
  const hostile = JSON.parse(
    '{"__proto__":{"polluted":1},"constructor":{"x":2},"a":[{"__proto__":3}]}',
  );

  it("resolveTemplates keeps __proto__ keys as own keys and pollutes nothing", () => {
    const out = resolve({ value: hostile, copy: "${input}" }, ctx([], { input: hostile })) as any;
    expect(JSON.stringify(out.value)).toBe(JSON.stringify(hostile));
    expect(JSON.stringify(out.copy)).toBe(JSON.stringify(hostile));
    expect(Object.getPrototypeOf(out.value)).toBe(Object.prototype);
    expect(({} as any).polluted).toBeUndefined();
  });

  it("steps named after Object.prototype members resolve through newTemplateContext", () => {
    const c = newTemplateContext(null, { id: "run-1", name: null });
    const ids = ["__proto__", "constructor", "toString", "hasOwnProperty", "valueOf"];
    ids.forEach((id, i) => addStepResult(c, i, id, { data: { id } }));
    for (const id of ids) expect(evaluate(`steps.${id}.data.id`, c)).toBe(id);
    expect(evaluate("steps['__proto__'].data.id", c)).toBe("__proto__");
    expect(evaluate("step[0].data.id", c)).toBe("__proto__");
    // A step that is not in the context is unresolved, not a member of Object.prototype.
    const empty = newTemplateContext(null, { id: "run-1", name: null });
    expect(() => evaluate("steps.toString", empty)).toThrow(TemplateUnresolvedError);
  });
});
