"""Roles in the reader's language: `{{ m.role|role_label }}` ("Coder"), and as a sentence
names them, `{{ m.role|role_words }}` ("coder"): coding.members."""

from django import template

from coding.members import role_label, role_words

register = template.Library()
register.filter("role_label", role_label)
register.filter("role_words", role_words)
