"""How answers are shown: to an agent (text within the response budget, beside the structured
content) and to a person at a terminal. Tools compute typed answers and know nothing of this."""
