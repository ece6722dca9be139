// Validate one address and explain the whole result: status and reason,
// the score with the signals that made it (docs/scoring.md), the SMTP
// conversation's outcome, the suggestion, and the same call as curl.
import {
  html,
  useState,
  useAction,
  PageTitle,
  ErrorNote,
  StatusBadge,
  TableScroll,
  CopyButton,
  shellQuote,
  origin,
  num,
} from "../ui.js";
import * as api from "../api.js";

const REASONS = {
  accepted_email: "The address looks deliverable.",
  invalid_syntax: "The address is not written correctly.",
  invalid_domain: "The domain does not exist or cannot receive mail.",
  no_mx: "The domain has no mail server (no MX, no address).",
  null_mx: "The domain says it accepts no mail (null MX, RFC 7505).",
  rejected_email: "The mail server refused this mailbox.",
  mailbox_disabled: "The mailbox is disabled.",
  catch_all: "The domain accepts every address, so this one cannot be confirmed.",
  accept_all: "A mail gateway accepted it without showing that the mailbox exists.",
  disposable: "A disposable (throw-away) address.",
  role_account: "A role address (info@, sales@, …), often read by several people.",
  mailbox_full: "The mailbox is full.",
  timeout: "The mail server did not answer in time.",
  dns_error: "The domain's DNS could not be read.",
  smtp_error: "The mail server gave no final answer (e.g. greylisting).",
  typo: "The domain looks like a typo.",
  random: "The local part looks randomly generated.",
  ip_literal: "The domain is an IP address.",
  unroutable_mx: "Every mail server address is one the service may not contact.",
};

const SIGNALS = {
  special_use_domain: "Special-use domain (.test, .invalid, …)",
  invalid_syntax: "Syntax error",
  invalid_domain: "The domain does not exist",
  null_mx: "Null MX: the domain takes no mail",
  no_mx: "No mail server",
  mailbox_disabled: "Mailbox disabled",
  rejected_email: "Mailbox refused by the server",
  disposable: "Disposable domain",
  ip_literal: "IP-address domain",
  typo: "Probable typo in the domain",
  mailbox_full: "Mailbox full",
  catch_all: "Catch-all domain",
  accept_all: "Accepted by a gateway that may accept any address",
  random: "Random-looking local part",
  role_account: "Role account",
  dns_error: "DNS failure",
  unroutable_mx: "Mail servers not reachable under the address policy",
  greylisted: "Greylisted, no final answer",
  timeout: "Mail server timed out",
  smtp_error: "No final SMTP answer",
  implicit_mx: "No MX: mail goes to the domain's own address",
  no_smtp_check: "Mailbox not checked over SMTP",
};

const yesNo = (v) => (v == null ? "not checked" : v ? "yes" : "no");

function curlOf(email, smtp) {
  const body = JSON.stringify(smtp ? { email, smtp: true } : { email });
  return (
    `curl -s ${origin()}/v2/email/validate \\\n` +
    `  -H "Authorization: Bearer $MAILASSAY_KEY" \\\n` +
    `  -H 'Content-Type: application/json' \\\n` +
    `  -d ${shellQuote(body)}`
  );
}

function Result({ r, onTry }) {
  const smtp = r.smtp || {};
  return html`<article aria-labelledby="result-title">
    <h2 id="result-title">${r.email}</h2>
    <p class="verdict"><${StatusBadge} status=${r.status} />${" "}
      <strong>${REASONS[r.reason] || r.reason}</strong>
      <span class="muted"> (reason <code>${r.reason}</code>)</span></p>
    ${r.sandbox && html`<p class="note">A test key's sandbox answered: no DNS or SMTP was used.</p>`}
    ${r.typo && r.typo.suggestion &&
    html`<p class="note warn">Did you mean <strong>${r.typo.suggestion}</strong>?${" "}
      <button type="button" class="small secondary" onClick=${() => onTry(r.typo.suggestion)}>
        Validate ${r.typo.suggestion}</button></p>`}

    <h3>Score</h3>
    <p><meter min="0" max="100" low="40" high="80" optimum="100" value=${r.score}
      aria-label="Score"></meter>
      <strong>${r.score}</strong> of 100 · valid 80–100, risky 40–79,
      unknown 20–39, invalid 0–19.</p>
    ${r.signals && r.signals.length
      ? html`<${TableScroll} label="Signals">
          <table>
            <caption class="muted">Signals that lowered the score</caption>
            <thead><tr><th scope="col">Signal</th><th scope="col">Meaning</th>
              <th scope="col" class="num">Points</th></tr></thead>
            <tbody>
              ${r.signals.map(
                (s) => html`<tr><td><code>${s.signal}</code></td>
                  <td>${SIGNALS[s.signal] || ""}</td>
                  <td class="num">${s.points}</td></tr>`,
              )}
            </tbody>
          </table>
        <//>`
      : html`<p>No signal lowered the score.</p>`}

    <h3>Mail server (SMTP)</h3>
    ${smtp.checked
      ? html`<dl class="figures">
          <div><dt>Server</dt><dd><code>${smtp.host || "—"}</code></dd></div>
          <div><dt>Reply</dt><dd>${smtp.code ?? "—"} ${smtp.enhancedCode || ""}</dd></div>
          <div><dt>Attempts</dt><dd>${num(smtp.attempts)}</dd></div>
          <div><dt>Deliverable</dt><dd>${yesNo(smtp.deliverable)}</dd></div>
          <div><dt>Catch-all</dt><dd>${yesNo(smtp.catchAll)}</dd></div>
          <div><dt>Greylisted</dt><dd>${yesNo(smtp.greylisted)}</dd></div>
        </dl>
        ${smtp.message && html`<p>Server said: <code>${smtp.message}</code></p>`}`
      : html`<p>Not checked: ${smtp.attempts
          ? `${smtp.attempts} attempts, no server answered.`
          : "ask for an SMTP check to probe the mailbox (1 credit)."}</p>`}

    <h3>Other checks</h3>
    <${TableScroll} label="Checks">
      <table>
        <tbody>
          <tr><th scope="row">Syntax</th><td>${r.syntax && r.syntax.valid
            ? html`valid: <code>${r.syntax.localPart}</code> at <code>${r.syntax.asciiDomain}</code>`
            : `invalid${r.syntax && r.syntax.detail ? ": " + r.syntax.detail : ""}`}</td></tr>
          <tr><th scope="row">Mail servers (MX)</th><td>${r.dns
            ? r.dns.mx && r.dns.mx.length
              ? r.dns.mx.map((m) => `${m.host} (${m.priority})`).join(", ")
              : r.dns.implicitMx
                ? "none: the domain's own address"
                : r.dns.nullMx
                  ? "null MX"
                  : "none"
            : "not looked up"}</td></tr>
          <tr><th scope="row">Provider</th><td>${r.provider
            ? `${r.provider.name} (${r.provider.kind === "gateway" ? "security gateway" : "mailbox provider"})`
            : r.dns ? "none known" : "not looked up"}</td></tr>
          <tr><th scope="row">Disposable</th><td>${yesNo(r.disposable && r.disposable.isDisposable)}</td></tr>
          <tr><th scope="row">Role account</th><td>${r.roleAccount == null
            ? "not checked"
            : r.roleAccount.isRoleAccount
              ? `yes (${r.roleAccount.role})`
              : "no"}</td></tr>
          <tr><th scope="row">Free provider</th><td>${yesNo(r.freeProvider && r.freeProvider.isFree)}</td></tr>
          <tr><th scope="row">Random-looking</th><td>${yesNo(r.random && r.random.isRandom)}</td></tr>
          ${r.enrichment &&
          html`<tr><th scope="row">First name</th><td>${r.enrichment.firstName || "—"}</td></tr>`}
          <tr><th scope="row">Credits used</th><td>${num(r.creditsUsed)}</td></tr>
        </tbody>
      </table>
    <//>
  </article>`;
}

export function Validate() {
  const [email, setEmail] = useState("");
  const [smtp, setSmtp] = useState(false);
  const [result, setResult] = useState(null);
  const [asked, setAsked] = useState(null);
  const { busy, error, run: act } = useAction();
  const run = (address, withSmtp) => {
    const body = withSmtp ? { email: address, smtp: true } : { email: address };
    return act(
      async () => {
        setResult(await api.post("/v2/email/validate", body));
        setAsked({ email: address, smtp: withSmtp });
      },
      { failed: () => setResult(null) },
    );
  };
  const submit = (e) => {
    e.preventDefault();
    run(email.trim(), smtp);
  };
  const tryAddress = (a) => {
    setEmail(a);
    run(a, smtp);
  };
  const curl = curlOf(asked ? asked.email : email.trim() || "jane@example.com",
    asked ? asked.smtp : smtp);
  return html`<${PageTitle}>Validate an address<//>
    <form onSubmit=${submit}>
      <label>Email address
        <input name="email" required maxlength="254" inputmode="email"
          autocomplete="off" spellcheck="false" value=${email}
          onInput=${(e) => setEmail(e.target.value)} />
      </label>
      <label>
        <input type="checkbox" role="switch" name="smtp" checked=${smtp}
          onChange=${(e) => setSmtp(e.target.checked)} />
        Check the mailbox over SMTP <span class="hint muted">(1 credit when a
          mail server is reached)</span>
      </label>
      <button type="submit" aria-busy=${busy ? "true" : undefined}>Validate</button>
    </form>
    <${ErrorNote} error=${error}>
      ${error && error.status === 402
        ? html`Not enough credits for an SMTP check. <a href="#/credits">Credits</a>`
        : error && error.message}
    <//>
    ${result && html`<${Result} r=${result} onTry=${tryAddress} />`}
    <details>
      <summary>Copy as curl</summary>
      <p>The same request with an API key (set <code>MAILASSAY_KEY</code>):</p>
      <pre><code>${curl}</code></pre>
      <${CopyButton} text=${curl} label="Copy curl command" />
    </details>`;
}
