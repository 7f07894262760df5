/**
 * The built-in `callback` tool (the Step Functions task-token pattern): POSTs
 * `{ runId, stepId, token, callbackUrl, input }` to `params.url`, then the step waits
 * until `POST /v1/callbacks/:token` or the step timeout. The shell stores the token
 * before this runs, so an answer that arrives before the POST returns is kept.
 */
import { z } from "zod";
import { sendHttp, type Fetcher, type UrlCheck } from "./http-client";
import { headersSchema, withTextHeaders } from "./http";
import { invalidParams, type Tool } from "./tool";

const paramsSchema = z.strictObject({
  url: z.string().min(1),
  headers: headersSchema.optional(),
  body: z.unknown().optional(),
});

export function callbackTool(fetcher: Fetcher, checkUrl: UrlCheck): Tool {
  return {
    name: "callback",
    params: paramsSchema,
    urlParams: ["url"],
    async invoke(params, call) {
      const parsed = paramsSchema.safeParse(withTextHeaders(params));
      if (!parsed.success) return invalidParams("callback", parsed.error);
      if (!call.callback)
        return { ok: false, category: "invalid_data", message: "callback: no token was issued" };
      const body = {
        runId: call.runId,
        stepId: call.stepId,
        token: call.callback.token,
        callbackUrl: call.callback.url,
        input: parsed.data.body ?? null,
      };
      const sent = await sendHttp(
        { url: parsed.data.url, method: "POST", headers: parsed.data.headers, body },
        call,
        fetcher,
        checkUrl,
      );
      if ("suspend" in sent || !sent.ok) return sent;
      return {
        suspend: {
          waitingFor: "callback",
          until: call.now + call.timeoutMs,
          token: call.callback.token,
        },
      };
    },
  };
}
