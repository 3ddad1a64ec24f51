"""`@tool`: JSON Schema from signatures and docstrings, and clear errors for what cannot be."""

from __future__ import annotations

import enum
from dataclasses import dataclass, field
from typing import Annotated, Any, Literal, TypedDict

import pytest

from loopwright.errors import ToolDefinitionError
from loopwright.tools import Tool, ToolContext, tool


def test_google_docstring_gives_descriptions_with_continuation_lines() -> None:
    @tool
    def search(query: str, limit: int = 10) -> str:
        """Search the notes.

        Use it before answering questions about the project.

        Args:
            query (str): what to look for,
                in plain words
            limit: at most this many hits

        Returns:
            the hits, one per line
        """
        return query

    assert search.description == (
        "Search the notes. Use it before answering questions about the project."
    )
    props = search.parameters["properties"]
    assert props["query"] == {"type": "string", "description": "what to look for, in plain words"}
    assert props["limit"] == {
        "type": "integer",
        "description": "at most this many hits",
        "default": 10,
    }
    assert search.parameters["required"] == ["query"]
    assert search.parameters["additionalProperties"] is False


def descriptions(made: Tool) -> dict[str, str]:
    """Each argument's description in a tool's JSON Schema."""
    properties = made.spec.parameters["properties"]
    return {name: schema["description"] for name, schema in properties.items()}


def test_sphinx_docstring() -> None:
    @tool
    def copy(source: str, target: str) -> str:
        """Copy a file.

        :param source: where from
        :param str target: where to,
            created if needed
        :type source: str
        :returns: nothing
        """
        return target

    assert copy.spec.description == "Copy a file."
    assert descriptions(copy) == {"source": "where from", "target": "where to, created if needed"}


def test_numpy_docstring() -> None:
    @tool
    def scale(values: list[float], low: float, high: float) -> list[float]:
        """Scale values.

        Parameters
        ----------
        values : list of float
            the numbers
            to scale
        low, high : float
            the range

        Returns
        -------
        list of float
        """
        return values

    assert scale.spec.description == "Scale values."
    assert descriptions(scale) == {
        "values": "the numbers to scale",
        "low": "the range",
        "high": "the range",
    }


class Color(enum.Enum):
    RED = "red"
    BLUE = "blue"


def test_optional_literal_enum_list_dict_and_annotated() -> None:
    @tool
    def paint(
        colors: list[Color],
        mode: Literal["fast", "slow"] = "fast",
        note: str | None = None,
        sizes: dict[str, int] | None = None,
        pair: tuple[int, str] = (1, "a"),
        weight: Annotated[float, "kilograms"] = 1.0,
    ) -> str:
        """Paint."""
        return ",".join(c.value for c in colors)

    props = paint.parameters["properties"]
    assert props["colors"] == {
        "type": "array",
        "items": {"type": "string", "enum": ["red", "blue"]},
    }
    assert props["mode"] == {"type": "string", "enum": ["fast", "slow"], "default": "fast"}
    assert props["note"] == {"type": ["string", "null"]}
    assert props["sizes"] == {
        "type": ["object", "null"],
        "additionalProperties": {"type": "integer"},
    }
    assert props["pair"]["prefixItems"] == [{"type": "integer"}, {"type": "string"}]
    assert props["weight"] == {"type": "number", "description": "kilograms", "default": 1.0}
    assert paint.parameters["required"] == ["colors"]


class Address(TypedDict):
    city: str
    zip: int


@dataclass
class Point:
    x: int
    y: int = 0


@dataclass
class Route:
    start: Point
    stops: list[Point] = field(default_factory=list)


async def test_nested_typeddict_and_dataclass_are_described_and_converted() -> None:
    @tool
    def plan(route: Route, to: Address) -> str:
        """Plan a route."""
        assert isinstance(route.start, Point)
        assert all(isinstance(s, Point) for s in route.stops)
        return f"{route.start.x},{route.stops[0].y}->{to['city']}"

    route_schema = plan.parameters["properties"]["route"]
    assert route_schema["required"] == ["start"]
    assert route_schema["properties"]["start"]["properties"]["x"] == {"type": "integer"}
    assert plan.parameters["properties"]["to"]["required"] == ["city", "zip"]
    result = await plan.invoke(
        {
            "route": {"start": {"x": 3}, "stops": [{"x": 1, "y": 7}]},
            "to": {"city": "Oslo", "zip": 1},
        },
        ToolContext(),
    )
    assert result == "3,7->Oslo"


def test_context_parameter_is_not_in_the_schema() -> None:
    @tool
    def where(ctx: ToolContext, name: str) -> str:
        """Where."""
        return str(ctx.workspace / name)

    assert where.context_param == "ctx"
    assert list(where.parameters["properties"]) == ["name"]


def test_effect_and_idempotent_declarations() -> None:
    @tool(effect="destructive")
    def wipe(path: str) -> None:
        """Wipe."""

    @tool(effect="write", idempotent=True)
    def put(path: str) -> None:
        """Put."""

    assert (wipe.effect, wipe.idempotent) == ("destructive", False)
    assert (put.effect, put.idempotent) == ("write", True)
    assert not Tool.from_function(lambda: None, name="noop").idempotent  # undeclared: unknown


class Opaque:
    pass


@pytest.mark.parametrize(
    ("make", "message"),
    [
        (lambda: tool(name="f")(lambda x: x), "needs a type hint"),
        (lambda: tool(_takes_opaque), r"_takes_opaque\(thing\): type 'Opaque' cannot be described"),
        (lambda: tool(_takes_kwargs), r"\*args/\*\*kwargs"),
        (lambda: tool(_int_keys), "dict keys must be str"),
        (lambda: tool(_recursive), "recursive type"),
        (lambda: tool(_bad_default), "default value"),
        (lambda: tool(name="bad name!")(_ok), "tool name 'bad name!'"),
        (lambda: tool(effect="explode")(_ok), "effect must be one of"),  # type: ignore[call-overload]
        (lambda: tool(timeout=0)(_ok), "timeout must be positive"),
    ],
)
def test_unsupported_definitions_raise_tool_definition_error(make: Any, message: str) -> None:
    with pytest.raises(ToolDefinitionError, match=message):
        make()


def _takes_opaque(thing: Opaque) -> None:
    """Bad."""


def _takes_kwargs(**kwargs: int) -> None:
    """Bad."""


def _int_keys(table: dict[int, str]) -> None:
    """Bad."""


@dataclass
class Node:
    children: list[Node]


def _recursive(tree: Node) -> None:
    """Bad."""


def _bad_default(when: str = b"x") -> None:  # type: ignore[assignment]
    """Bad."""


def _ok(x: int) -> int:
    """Fine."""
    return x
