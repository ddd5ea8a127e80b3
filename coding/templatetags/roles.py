"""Roles in the reader's language: `{{ m.role|role_label }}` ("Coder"), and as a sentence
names them, `{{ m.role|role_words }}` ("coder"): coding.studies.members."""

from django import template

from coding.access.roles import role_label, role_words

register = template.Library()
register.filter("role_label", role_label)
register.filter("role_words", role_words)
