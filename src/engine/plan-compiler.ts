/**
 * The cross-field rules of plan validation (SPEC 2.2) that zod cannot express, run on a plan
 * whose shape already parsed: unique ids, known tools and their params, templates and the steps
 * they reference, dependencies and cycles, URLs and egress. Every issue carries a dotted path
 * into the submitted document; one URL outside ALLOWED_HOSTS makes the whole failure
 * `egress_denied`. Pure: no I/O.
 */
import type { Issue } from "../errors";
import { buildCompiledPlan } from "./build-plan";
import { schemeProblem } from "./egress";
import { findCycles, stepNamedBy, topologicalOrder } from "./graph";
import type { CompiledPlan } from "./plan";
import type { ParsedPlan, ParsedStep } from "./plan-schema";
import {
  FOR_EACH_ROOTS,
  STEP_ROOTS,
  TemplateReferenceError,
  TemplateSyntaxError,
  VERIFY_ROOTS,
  containsTemplate,
  forEachString,
  parseTemplate,
  stepReference,
  type StepRef,
} from "./templates";
import { decidedWhenRun, wholeTemplateIssues } from "./template-fields";
import type { CompileFailure, ToolSpec, UrlProblem, ValidationContext } from "./validate";
import { joinPath, zodIssues } from "./zod-issues";

/** Tools whose attempts wait for time or an answer: one per step, never per forEach item. */
const SUSPENDING_TOOLS: ReadonlySet<string> = new Set(["wait", "approval", "callback"]);

/** Where an edge came from, so a cycle can be reported at the path that closes it. */
interface Edge {
  from: number;
  to: number;
  path: string;
}

export class PlanCompiler {
  private readonly issues: Issue[] = [];
  /** Issues that are hosts ALLOWED_HOSTS denies: the code is `egress_denied` when they are all there is. */
  private egressIssues = 0;
  private readonly ids: string[];
  private readonly indexById = new Map<string, number>();

  constructor(
    private readonly plan: ParsedPlan,
    private readonly ctx: ValidationContext,
  ) {
    this.ids = plan.steps.map((s, i) => s.id ?? String(i));
  }

  compile(): { ok: true; plan: CompiledPlan } | CompileFailure {
    this.ids.forEach((id, i) => {
      if (this.indexById.has(id)) {
        const path = this.plan.steps[i]!.id === undefined ? `steps.${i}` : `steps.${i}.id`;
        this.issue(path, `duplicate step id "${id}" (also step ${this.indexById.get(id)})`);
      } else this.indexById.set(id, i);
    });
    if (this.plan.webhook) this.checkPlainUrl(this.plan.webhook.url, "webhook.url", "webhook");
    if (this.plan.replan?.url !== undefined)
      this.checkPlainUrl(this.plan.replan.url, "replan.url", "planner");

    const edges: Edge[] = [];
    const refs: number[][] = this.plan.steps.map(() => []);
    const compensateRefs: number[][] = this.plan.steps.map(() => []);
    this.plan.steps.forEach((step, i) => {
      this.checkStep(step, i, edges, refs[i]!);
      if (step.compensate) this.checkCompensation(step.compensate, i, compensateRefs[i]!);
    });
    // Cycles among the references that resolved are reported beside the other issues (every
    // problem at once), unless ids repeat: then a reference may name either step.
    if (this.indexById.size < this.ids.length) return this.fail();
    const deps: number[][] = this.plan.steps.map(() => []);
    for (const e of edges) if (!deps[e.from]!.includes(e.to)) deps[e.from]!.push(e.to);
    if (topologicalOrder(deps) === null) {
      for (const cycle of findCycles(deps)) {
        const [a, b] = [cycle[cycle.length - 2]!, cycle[cycle.length - 1]!];
        // cycle[k] depends on cycle[k + 1]; report the edge that closes it, and name the
        // steps in execution order.
        const closing = edges.find((e) => e.from === a && e.to === b);
        const names = [...cycle]
          .reverse()
          .map((i) => `"${this.ids[i]}"`)
          .join(" -> ");
        this.issue(closing?.path ?? `steps.${a}`, `dependency cycle: ${names}`);
      }
    }
    if (this.issues.length > 0) return this.fail();
    return {
      ok: true,
      plan: buildCompiledPlan(this.plan, this.ids, deps, refs, compensateRefs),
    };
  }

  private checkStep(step: ParsedStep, i: number, edges: Edge[], refs: number[]): void {
    const at = `steps.${i}`;
    this.checkToolCall(step.tool, step.params, at);
    if (step.forEach !== undefined && SUSPENDING_TOOLS.has(step.tool)) {
      this.issue(`${at}.forEach`, `forEach cannot run the "${step.tool}" tool per item`);
    }
    for (const issue of wholeTemplateIssues(step, at)) this.issue(issue.path, issue.message);
    for (const key of ["dependsOn", "depends_on"] as const) {
      step[key]?.forEach((dep, k) => {
        const path = `${at}.${key}.${k}`;
        const target = this.resolveDependency(dep, path);
        if (target === undefined) return;
        if (target === i) this.issue(path, `step "${this.ids[i]}" depends on itself`);
        else edges.push({ from: i, to: target, path });
      });
    }
    const templated: [unknown, string, ReadonlySet<string>][] = [
      [step.params, `${at}.params`, step.forEach === undefined ? STEP_ROOTS : FOR_EACH_ROOTS],
      [step.when, `${at}.when`, STEP_ROOTS],
      [step.forEach, `${at}.forEach`, STEP_ROOTS],
      [step.verify, `${at}.verify`, VERIFY_ROOTS],
    ];
    for (const [value, base, roots] of templated) {
      forEachString(value, base, (s, path) => {
        for (const ref of this.templateRefs(s, path, roots)) {
          const target = this.resolveRef(ref, path);
          if (target === undefined) continue;
          if (target === i) this.issue(path, `step "${this.ids[i]}" references itself`);
          else {
            edges.push({ from: i, to: target, path });
            if (!refs.includes(target)) refs.push(target);
          }
        }
      });
    }
  }

  /** A compensation runs after the run failed: it may read any step, itself included, and adds no edge. */
  private checkCompensation(
    compensate: { tool: string; params: Record<string, unknown> },
    i: number,
    refs: number[],
  ): void {
    const at = `steps.${i}.compensate`;
    if (
      this.checkToolCall(compensate.tool, compensate.params, at) &&
      SUSPENDING_TOOLS.has(compensate.tool)
    ) {
      this.issue(`${at}.tool`, `a compensation cannot use the "${compensate.tool}" tool`);
    }
    forEachString(compensate.params, `${at}.params`, (s, path) => {
      for (const ref of this.templateRefs(s, path, STEP_ROOTS)) {
        const target = this.resolveRef(ref, path);
        if (target !== undefined && !refs.includes(target)) refs.push(target);
      }
    });
  }

  /**
   * What every tool call gets, a step's own or its compensation (`at` is the object holding
   * `tool` and `params`): the tool exists, the params fit its schema, and every URL it will
   * call is http(s) and inside ALLOWED_HOSTS. Returns the tool's spec, if it exists.
   */
  private checkToolCall(
    tool: string,
    params: Record<string, unknown>,
    at: string,
  ): ToolSpec | undefined {
    const spec = this.ctx.tool(tool);
    if (!spec) {
      this.issue(`${at}.tool`, `unknown tool "${tool}"`);
      return undefined;
    }
    const result = spec.params?.safeParse(params);
    if (result && !result.success) {
      // A value a template fills in is checked when the attempt resolves it (the tool's own
      // parse then fails the step, naming the param): `"method": "${input.m}"` is fine here.
      const issues = result.error.issues.filter((i) => !decidedWhenRun(params, i));
      for (const issue of zodIssues({ issues })) {
        this.issue(joinPath(`${at}.params`, issue.path), issue.message);
      }
    }
    for (const name of spec.urlParams ?? []) {
      const url = params[name];
      if (typeof url === "string") this.checkUrl(url, `${at}.params.${name}`);
    }
    // A registry tool's URL is known now: without this the plan would be accepted and every call denied at run time.
    if (spec.fixedUrl !== undefined) {
      const problem = this.ctx.checkUrl(spec.fixedUrl);
      if (problem)
        this.urlIssue(problem, `${at}.tool`, `tool "${tool}" calls a URL set in TOOLS: `);
    }
    return spec;
  }

  private templateRefs(s: string, path: string, roots: ReadonlySet<string>): StepRef[] {
    if (!containsTemplate(s)) return [];
    try {
      const refs: StepRef[] = [];
      for (const part of parseTemplate(s, roots)) {
        if (part.kind !== "expr") continue;
        const max = this.ctx.maxTemplateLength ?? 1024;
        if (part.expr.length > max) {
          this.issue(
            path,
            `template expression is ${part.expr.length} characters, more than ${max} (MAX_TEMPLATE_LENGTH)`,
          );
          continue;
        }
        const ref = stepReference(part.expr);
        if (ref) refs.push(ref);
      }
      return refs;
    } catch (err) {
      if (!(err instanceof TemplateSyntaxError)) throw err;
      const kind = err instanceof TemplateReferenceError ? "reference" : "syntax";
      this.issue(path, `template ${kind} error: ${err.message}`);
      return [];
    }
  }

  private resolveDependency(dep: string | number, path: string): number | undefined {
    if (typeof dep === "number") {
      if (dep < this.ids.length) return dep;
      this.issue(path, `unknown dependency: there is no step with index ${dep}`);
      return undefined;
    }
    const i = stepNamedBy(dep, (id) => this.indexById.get(id), this.ids.length);
    if (i === undefined) this.issue(path, `unknown dependency "${dep}"`);
    return i;
  }

  private resolveRef(ref: StepRef, path: string): number | undefined {
    if (ref.by === "index") {
      if (ref.index < this.ids.length) return ref.index;
      this.issue(
        path,
        `template references step[${ref.index}], but the plan has ${this.ids.length} steps`,
      );
      return undefined;
    }
    const i = this.indexById.get(ref.id);
    if (i === undefined) this.issue(path, `template references unknown step "${ref.id}"`);
    return i;
  }

  private checkUrl(url: string, path: string): void {
    // A URL built by a template is checked when the step runs; a scheme written before the
    // template (`ftp://${input.host}`) can only be wrong, so it is checked now.
    if (containsTemplate(url)) {
      const scheme = /^([a-z][a-z0-9+.-]*:)/i.exec(url.slice(0, url.indexOf("${")))?.[1];
      const problem = scheme === undefined ? null : schemeProblem(scheme.toLowerCase());
      if (problem) this.issue(path, problem.message);
      return;
    }
    const problem = this.ctx.checkUrl(url);
    if (problem) this.urlIssue(problem, path);
  }

  /** A webhook's or planner's URL is used as written (it is not a template): checked whole, `${` included. */
  private checkPlainUrl(url: string, path: string, what: string): void {
    const problem = this.ctx.checkUrl(url);
    if (problem) this.urlIssue(problem, path);
    else if (containsTemplate(url))
      this.issue(path, `${what} URLs are not templates: remove the \${...}`);
  }

  private urlIssue(problem: UrlProblem, path: string, prefix = ""): void {
    if (problem.code === "egress_denied") this.egressIssues++;
    this.issue(path, prefix + problem.message);
  }

  private issue(path: string, message: string): void {
    this.issues.push({ path, message });
  }

  private fail(): CompileFailure {
    return {
      ok: false,
      code: this.egressIssues === this.issues.length ? "egress_denied" : "invalid_plan",
      issues: this.issues,
    };
  }
}
