/**
 * Removes the token and anything shaped like a Hugging Face token from text meant for people.
 * A module of its own (no Hub client library) so that `hf://` input errors can use it without
 * loading @huggingface/hub at every start.
 */
export function scrubSecrets(text: string, token: string | undefined): string {
  const withoutToken = token ? text.replaceAll(token, "<token>") : text;
  return withoutToken.replace(/hf_[A-Za-z0-9]{6,}/g, "hf_<redacted>");
}
