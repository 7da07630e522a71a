"""``Message``'s private attributes set as pydantic's ``init_private_attributes`` sets them."""

from __future__ import annotations

import copy
import pickle

import pytest
from pydantic import PrivateAttr
from pydantic._internal._model_construction import init_private_attributes

from ctxmgr.state import Message
from ctxmgr.state.message import TextBlock


def _pydantic_private(message: Message) -> dict[str, object]:
    fresh = Message.model_construct(role="user", content=[])
    object.__setattr__(fresh, "__pydantic_private__", None)
    init_private_attributes(fresh, None)
    assert fresh.__pydantic_private__ is not None
    return fresh.__pydantic_private__


def test_a_new_message_holds_pydantics_defaults() -> None:
    message = Message(role="user", content=[TextBlock(text="hi")])
    assert message.__pydantic_private__ == _pydantic_private(message)
    assert list(message.__pydantic_private__) == list(Message.__private_attributes__)
    assert message.source is None
    assert message.source_format is None
    assert message.edited_source_in("openai-chat") is None


def test_each_message_has_its_own_private_values() -> None:
    one = Message(role="user", content=[]).with_source([{"role": "user"}], "openai-chat")
    two = Message(role="user", content=[])
    assert one.source == ({"role": "user"},)
    assert one.source_format == "openai-chat"
    assert two.source is None
    assert two.source_format is None
    assert one.__pydantic_private__ is not two.__pydantic_private__


def test_constructed_copied_and_pickled_messages_keep_their_sources() -> None:
    built = Message.model_construct(role="assistant", content=[])
    assert built.__pydantic_private__ == _pydantic_private(built)
    read = Message(role="user", content=[TextBlock(text="x")]).with_source([{"a": 1}], "native")
    for copied in (
        read.model_copy(),
        read.model_copy(deep=True),
        copy.deepcopy(read),
        pickle.loads(pickle.dumps(read)),
    ):
        assert copied.source == ({"a": 1},)
        assert copied.source_format == "native"
        assert copied.__pydantic_private__ is not read.__pydantic_private__


def test_a_subclass_gets_its_own_private_attributes_too() -> None:
    class Tagged(Message):
        _tag: str = PrivateAttr(default="t")

    tagged = Tagged(role="user", content=[])
    assert tagged._tag == "t"
    assert tagged.source is None
    assert tagged.edited_source_format is None


def test_private_values_read_as_pydantic_reads_them() -> None:
    from ctxmgr.state.message import _private

    read = Message(role="user", content=[]).with_source([{"a": 1}], "native")
    for name in Message.__private_attributes__:
        assert _private(read, name) == getattr(read, name)
    assert read.source_in("native") == ({"a": 1},)
    assert read.source_in("openai-chat") is None
    assert read.edited_source_in("native") is None
    del read._source_format
    with pytest.raises(AttributeError):
        _private(read, "_source_format")  # pydantic's own error for a value not there


def test_a_subclass_declaring_a_source_of_its_own_is_read_through_it() -> None:
    class Fixed(Message):
        @property
        def _source_format(self) -> str:  # type: ignore[override]
            return "native"

    fixed = Fixed(role="user", content=[])
    assert fixed.source_format == "native"
    assert fixed.source_in("native") is None  # its _source is still pydantic's default
