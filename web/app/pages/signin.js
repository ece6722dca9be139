// Sign in and sign up. Sign-up is offered only when the server has it open
// (auth.signup_enabled, read from GET /v2/auth/options).
import { html, useState, useEffect, useAction, useFields, ErrorNote, PageTitle } from "../ui.js";
import * as api from "../api.js";

function useSignupEnabled() {
  const [enabled, setEnabled] = useState(null);
  useEffect(() => {
    api.signupEnabled().then(setEnabled, () => setEnabled(false));
  }, []);
  return enabled;
}

export function SignIn() {
  const signup = useSignupEnabled();
  const [email, setEmail] = useState("");
  const [password, setPassword] = useState("");
  const { busy, error, run } = useAction();
  const submit = (e) => {
    e.preventDefault();
    run(
      async () => {
        await api.signIn(email, password);
        window.location.hash = "#/";
      },
      { leaving: true },
    );
  };
  return html`<article>
    <${PageTitle}>Sign in to mailassay<//>
    <form onSubmit=${submit}>
      <label>Email
        <input type="email" name="email" autocomplete="username" required
          value=${email} onInput=${(e) => setEmail(e.target.value)} />
      </label>
      <label>Password
        <input type="password" name="password" autocomplete="current-password"
          required value=${password} onInput=${(e) => setPassword(e.target.value)} />
      </label>
      <${ErrorNote} error=${error}>
        ${error && error.status === 401
          ? "The email or the password is wrong."
          : error && error.message}
      <//>
      <button type="submit" aria-busy=${busy ? "true" : undefined}>Sign in</button>
    </form>
    ${signup === null
      ? html`<p aria-busy="true"><span class="visually-hidden">Checking whether sign-up is open</span></p>`
      : signup &&
        html`<p>No account yet? <a href="#/signup">Create an organization</a>.</p>`}
  </article>`;
}

export function SignUp() {
  const signup = useSignupEnabled();
  const [f, set] = useFields({ organizationName: "", name: "", email: "", password: "" });
  const { busy, error, run } = useAction();
  const submit = (e) => {
    e.preventDefault();
    const body = { organizationName: f.organizationName, email: f.email, password: f.password };
    if (f.name) body.name = f.name;
    run(
      async () => {
        await api.signUp(body);
        window.location.hash = "#/";
      },
      { leaving: true },
    );
  };
  if (signup === null)
    return html`<article><${PageTitle}>Sign up<//><p aria-busy="true">Loading…</p></article>`;
  if (signup === false)
    return html`<article>
      <${PageTitle}>Sign up<//>
      <p>Sign-up is closed on this server: ask its operator for an account.</p>
      <p><a href="#/signin">Sign in</a></p>
    </article>`;
  return html`<article>
    <${PageTitle}>Create an organization<//>
    <p>You will be its owner. New organizations start with free credits for
      SMTP checks.</p>
    <form onSubmit=${submit}>
      <label>Organization name
        <input name="organizationName" required autocomplete="organization"
          value=${f.organizationName} onInput=${set("organizationName")} />
      </label>
      <label>Your name <span class="muted">(optional)</span>
        <input name="name" autocomplete="name" value=${f.name} onInput=${set("name")} />
      </label>
      <label>Email
        <input type="email" name="email" required autocomplete="username"
          value=${f.email} onInput=${set("email")} />
      </label>
      <label for="signup-password">Password</label>
      <input id="signup-password" type="password" name="password" required minlength="8"
        autocomplete="new-password" aria-describedby="password-help"
        value=${f.password} onInput=${set("password")} />
      <small id="password-help">At least 8 characters.</small>
      <${ErrorNote} error=${error} />
      <button type="submit" aria-busy=${busy ? "true" : undefined}>Create account</button>
    </form>
    <p>Already have an account? <a href="#/signin">Sign in</a>.</p>
  </article>`;
}
