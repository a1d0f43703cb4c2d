// The console's HTML: the search page and the phone refusal, server-rendered with hono/jsx (escaped).
import type { Child } from 'hono/jsx';
import type { ConsoleExamples } from './examples.js';
import { ICON_PATH } from './icon.js';

export const SCRIPT_PATH = '/console/app.js';
export const STYLE_PATH = '/console/app.css';

function Document(props: { title: string; children: Child }) {
  return (
    <html lang="en">
      <head>
        <meta charset="utf-8" />
        <meta name="viewport" content="width=device-width, initial-scale=1" />
        <meta name="referrer" content="no-referrer" />
        <title>{props.title}</title>
        <link rel="icon" href={ICON_PATH} />
        <link rel="stylesheet" href={STYLE_PATH} />
      </head>
      <body>{props.children}</body>
    </html>
  );
}

function Header(props: { provider: string }) {
  return (
    <header class="bar">
      <div class="bar-inner">
        <span class="brand">
          <span class="logo" aria-hidden="true">
            ☎
          </span>{' '}
          Caller ID console
        </span>
        <span class="provider">
          Directory: <strong>{props.provider}</strong>
        </span>
      </div>
    </header>
  );
}

export interface ConsolePageProps {
  provider: string;
  resultsPath: string;
  perAddress: number;
  windowSeconds: number;
  /** Spellings DEFAULT_REGION accepts, for the intro, the placeholder and the script's hint. */
  examples: ConsoleExamples;
}

function ConsolePage(props: ConsolePageProps) {
  return (
    <Document title="Caller ID console">
      <Header provider={props.provider} />
      <main
        class="page"
        data-results-path={props.resultsPath}
        data-example-international={props.examples.international}
        data-example-national={props.examples.national}
      >
        <section class="narrow" aria-labelledby="narrow-title">
          <h1 id="narrow-title">Please use a larger screen</h1>
          <p>
            The console needs a window at least 768 pixels wide. Widen the window, or open it on a tablet or a computer.
          </p>
        </section>
        <div class="tool">
          <section class="intro">
            <h1>Who is calling?</h1>
            <p>
              Type a telephone number in any usual spelling, for example <code>{props.examples.international}</code>
              {props.examples.national === undefined ? (
                ' (international format)'
              ) : (
                <>
                  {' '}
                  or <code>{props.examples.national}</code>
                </>
              )}
              . The console shows the entries of the <strong>{props.provider}</strong> directory only and allows{' '}
              {props.perAddress} searches per {props.windowSeconds} seconds.
            </p>
          </section>
          <form id="search-form" class="search" action="/console" method="get" role="search" novalidate>
            <label for="what">Telephone number</label>
            <div class="row">
              <input
                id="what"
                name="what"
                type="tel"
                inputmode="tel"
                autocomplete="off"
                spellcheck={false}
                maxlength={40}
                placeholder={`e.g. ${props.examples.national ?? props.examples.international}`}
                aria-describedby="what-hint"
                required
              />
              <button id="search-button" type="submit">
                Search
              </button>
            </div>
            <p id="what-hint" class="hint">
              Press Enter to search. <span id="quota"></span>
            </p>
          </form>
          <noscript>
            <p class="message message-error">The console needs JavaScript to search.</p>
          </noscript>
          <section class="request" aria-label="Request">
            <h2>Request</h2>
            <pre id="request-line" class="code">
              GET /v2/contacts/search?what=…
            </pre>
            <p class="hint">
              The same request on the API, with <code>Authorization: Bearer &lt;token&gt;</code>, returns every
              provider's entries.
            </p>
          </section>
          <div id="status" class="message" role="status" aria-live="polite" hidden></div>
          <section aria-labelledby="results-title">
            <h2 id="results-title" class="visually-hidden">
              Results
            </h2>
            <div id="results" class="cards"></div>
          </section>
          <details id="raw" class="raw" hidden>
            <summary>Raw JSON response</summary>
            <pre id="raw-json" class="code" tabindex={0}></pre>
          </details>
        </div>
      </main>
      <script src={SCRIPT_PATH} defer></script>
    </Document>
  );
}

function PhoneRefusalPage(props: { provider: string }) {
  return (
    <Document title="Caller ID console: tablets and larger">
      <Header provider={props.provider} />
      <main class="page refusal">
        <section class="refusal-card" aria-labelledby="refusal-title">
          <div class="device-icon" aria-hidden="true"></div>
          <h1 id="refusal-title">Available on tablets and larger devices</h1>
          <p>The caller ID console is not available on phones. Please open this page on a tablet or a computer.</p>
        </section>
      </main>
    </Document>
  );
}

export const renderConsolePage = (props: ConsolePageProps): string =>
  `<!doctype html>${String(<ConsolePage {...props} />)}`;
export const renderPhoneRefusal = (provider: string): string =>
  `<!doctype html>${String(<PhoneRefusalPage provider={provider} />)}`;
