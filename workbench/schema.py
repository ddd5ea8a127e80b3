"""How the API's token authentication appears in the OpenAPI schema."""

from drf_spectacular.extensions import OpenApiAuthenticationExtension


class TokenScheme(OpenApiAuthenticationExtension):
    target_class = "workbench.auth.TokenAuthentication"
    name = "tokenAuth"

    def get_security_definition(self, auto_schema):
        return {
            "type": "apiKey", "in": "header", "name": "Authorization",
            "description": "`Token <key>`, with a key made on /account/tokens/ "
                           "(or `manage.py api_token create`).",
        }


ERROR = {
    "type": "object",
    "description": "What was wrong: `detail` for the request as a whole, or a list of "
                   "messages per field (nested for nested fields).",
    "properties": {"detail": {"type": "string"}},
    "additionalProperties": True,
}
ERRORS = {
    "400": "The input is not valid; the body names each field and what is wrong with it.",
    "401": "Not logged in: send `Authorization: Token <key>` or a session cookie.",
    "403": "Logged in, but your role in the study does not allow this (or a CSRF token is "
           "missing from a session request).",
    "404": "No such object, or it is not yours to see (a study you are not a member of).",
    "405": "The method is not allowed here.",
    "415": "The body is not in a media type the operation reads (JSON, or a form).",
}


def document_errors(result, generator, request, public):
    """A drf-spectacular postprocessing hook: every operation documents the error answers
    it can give — 401, 403, 405 always; 404 with path parameters; 400 when it reads a body
    or query parameters — with one `Error` schema."""
    result.setdefault("components", {}).setdefault("schemas", {})["Error"] = ERROR
    ref = {"$ref": "#/components/schemas/Error"}
    for path, path_item in result.get("paths", {}).items():
        for method, operation in path_item.items():
            if not isinstance(operation, dict) or "responses" not in operation:
                continue
            parameters = operation.get("parameters", [])
            codes = ["401", "403", "405"]
            if "{" in path:
                codes.append("404")
            if "requestBody" in operation or any(p.get("in") == "query" for p in parameters):
                codes.append("400")
            if "requestBody" in operation:
                codes.append("415")
            for code in codes:
                operation["responses"].setdefault(code, {
                    "description": ERRORS[code],
                    "content": {"application/json": {"schema": ref}},
                })
    return result
