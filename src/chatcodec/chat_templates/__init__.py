"""Encoding: chat templates turn a conversation into the exact prompt a model was trained on.

jinja2 is imported only by the modules that render (``environment``, ``render``); importing this
package alone costs nothing.
"""
