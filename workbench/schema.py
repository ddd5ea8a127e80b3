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
