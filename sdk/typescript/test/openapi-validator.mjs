// Validates answers against the server's own OpenAPI document with ajv: the
// route's documented response schema for the answer's status and media type.

import Ajv2020 from "ajv/dist/2020.js";
import addFormats from "ajv-formats";

export function answerValidator(doc) {
  const ajv = new Ajv2020({ strict: false, allErrors: true });
  addFormats(ajv);
  ajv.addSchema(doc, "openapi");
  const routes = Object.keys(doc.paths).map((template) => ({
    template,
    re: new RegExp("^" + template.replace(/\{[^}]+\}/g, "[^/]+") + "$"),
  }));
  const escape = (s) => s.replace(/~/g, "~0").replace(/\//g, "~1");
  /** Returns null when the answer fits the document, else what is wrong. */
  return function check({ method, url, status, contentType, text }) {
    const path = new URL(url).pathname;
    const route = routes.find((r) => r.re.test(path));
    if (!route) return `${method} ${path}: no such path in the document`;
    const op = doc.paths[route.template][method.toLowerCase()];
    if (!op) return `${method} ${route.template}: not in the document`;
    const reply = op.responses[String(status)];
    if (!reply) return `${method} ${route.template}: status ${status} is not documented`;
    const media = (contentType || "").split(";")[0].trim();
    if (!reply.content) return text ? `${method} ${route.template} ${status}: a body where none is documented` : null;
    if (!reply.content[media]) return `${method} ${route.template} ${status}: media type ${media} is not documented`;
    const ref = `openapi#/paths/${escape(route.template)}/${method.toLowerCase()}/responses/${status}/content/${escape(media)}/schema`;
    const validate = ajv.getSchema(ref);
    if (!validate) return `${ref}: cannot compile`;
    if (validate(JSON.parse(text))) return null;
    return `${method} ${route.template} ${status}: ${ajv.errorsText(validate.errors)}\n${text.slice(0, 2000)}`;
  };
}

/** A fetch that records every answer it passes on. */
export function recordingFetch(answers) {
  return async (url, init = {}) => {
    const resp = await fetch(url, init);
    const text = await resp.clone().text();
    answers.push({ method: init.method ?? "GET", url: String(url), status: resp.status,
      contentType: resp.headers.get("content-type"), text });
    return resp;
  };
}
