/** The edgestep console: served by the Worker at `/`, it uses only the public HTTP API. */
import { render } from "preact";
import { useEffect, useState } from "preact/hooks";
import { apiKey, onKeyNeeded, setApiKey } from "./auth";
import { Playground } from "./pages/playground";
import { RunsPage } from "./pages/runs-page";
import { useRoute } from "./router";
import { RunPage } from "./run/run-page";

/**
 * Asked when the API answers 401 (the Worker has API_KEYS set); `refused`: the key entered
 * last was not taken, which the prompt says (else it would only come back, empty).
 */
function KeyPrompt({ refused, onKey }: { refused: boolean; onKey: () => void }) {
  const [value, setValue] = useState("");
  return (
    <div class="modal-backdrop">
      <form
        class="modal key-prompt"
        onSubmit={(e) => {
          e.preventDefault();
          if (!value) return;
          setApiKey(value);
          onKey();
        }}
      >
        <h2>API key</h2>
        <p>
          This edgestep needs an API key. It is kept in this tab only (sessionStorage) and sent in
          the Authorization header.
        </p>
        {refused && (
          <p class="message" data-testid="key-refused">
            That key was refused (401): check it and enter it again.
          </p>
        )}
        <input
          type="password"
          name="apiKey"
          autocomplete="off"
          autofocus
          value={value}
          onInput={(e) => setValue((e.target as HTMLInputElement).value)}
        />
        <button type="submit" class="primary">
          Use this key
        </button>
      </form>
    </div>
  );
}

function App() {
  const route = useRoute();
  /** null: no prompt; else whether the key last entered was refused. */
  const [needKey, setNeedKey] = useState<{ refused: boolean } | null>(null);
  /** Bumped when a key is entered: pages mount again and read with it. */
  const [session, setSession] = useState(0);
  // A prompt already shown stays as it is: a page still polling without a key (the runs list)
  // must not clear the word that the key entered was refused.
  useEffect(() => onKeyNeeded((refused) => setNeedKey((shown) => shown ?? { refused })), []);
  const tab = route.page === "playground" ? "playground" : "runs";
  return (
    <>
      <nav class="top">
        <a class="brand" href="/">
          edgestep
        </a>
        <a href="/" class={tab === "runs" ? "on" : ""}>
          Runs
        </a>
        <a href="/playground" class={tab === "playground" ? "on" : ""}>
          Playground
        </a>
        <span class="spacer" />
        <a href="/openapi.json" target="_blank" rel="noreferrer">
          API
        </a>
        {apiKey() && <span class="muted small">key set</span>}
      </nav>
      <main key={session}>
        {/* Keyed by the filters it was reached with: the "Runs" link clears them, Back restores them. */}
        {route.page === "runs" && <RunsPage key={route.search} />}
        {route.page === "run" && <RunPage key={route.runId} runId={route.runId} />}
        {route.page === "playground" && <Playground />}
        {route.page === "not_found" && (
          <div class="page">
            <h1>Not found</h1>
            <p>
              <code>{route.path}</code> is not a page of the console. <a href="/">Runs</a>
            </p>
          </div>
        )}
      </main>
      {needKey && (
        <KeyPrompt
          refused={needKey.refused}
          onKey={() => {
            setNeedKey(null);
            setSession((n) => n + 1);
          }}
        />
      )}
    </>
  );
}

render(<App />, document.getElementById("app")!);
