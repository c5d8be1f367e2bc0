"""Swift source as text: the one lexer every text scan uses, the declaration scan (extents,
signatures) and the names an agent types (`Type.member(label:)`). Standard library only.
"""
