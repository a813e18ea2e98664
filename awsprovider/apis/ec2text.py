"""Text that goes to EC2 (tags, tag filters, names and ids in selector terms): EC2's tag rules.

EC2 tag keys and values are UTF-8 text (https://docs.aws.amazon.com/AWSEC2/latest/UserGuide/
Using_Tags.html#tag-restrictions); the Query
API carries them, and filter values, in XML 1.0, which cannot hold control characters, surrogates
or the noncharacters U+FFFE/U+FFFF (EC2 answers InvalidParameterValue; moto's XML then breaks
botocore's parser). karpy refuses such text where it is written, as the provider's own validation:
one line naming the field, never a traceback or hundreds of failed launches.
"""

from __future__ import annotations

import unicodedata
from typing import Annotated

from pydantic import AfterValidator

__all__ = ["Ec2Text", "ec2_text_problem"]


def _forbidden(c: str) -> str | None:
    """What ``c`` is when EC2 text cannot hold it: a control character (Cc), a surrogate (Cs) or a
    noncharacter (U+FDD0..U+FDEF, U+xFFFE/U+xFFFF); else None."""
    o, category = ord(c), unicodedata.category(c)
    if category == "Cc":
        return "a control character"
    if category == "Cs":
        return "a surrogate"
    if 0xFDD0 <= o <= 0xFDEF or (o & 0xFFFE) == 0xFFFE:
        return "a noncharacter"
    return None


def ec2_text_problem(value: str) -> str | None:
    """Why EC2 would refuse ``value`` as tag or filter text, or None."""
    for i, c in enumerate(value):
        what = _forbidden(c)
        if what is not None:
            return (f"contains U+{ord(c):04X} ({what}) at position {i}; EC2 tags and filter values are UTF-8 "
                    f"text without control characters or noncharacters")
    return None


def _check(value: str) -> str:
    problem = ec2_text_problem(value)
    if problem is not None:
        raise ValueError(problem)
    return value


#: a string EC2 accepts as tag or filter text (see the module doc)
Ec2Text = Annotated[str, AfterValidator(_check)]
