"""Tools for the tool-use evaluation suite. Deterministic: fixed tables, no network."""

from __future__ import annotations

import math

from loopwright import ToolContext, ToolError, tool

WEATHER = {
    "paris": (18, "cloudy"),
    "tokyo": (24, "sunny"),
    "oslo": (4, "snow"),
    "lima": (21, "fog"),
}
RATES_TO_USD = {"USD": 1.0, "EUR": 1.10, "GBP": 1.25, "JPY": 0.0067}
USERS = {
    "u1": {"name": "Ada Lovelace", "email": "ada@example.com", "team": "engines"},
    "u2": {"name": "Alan Turing", "email": "alan@example.com", "team": "codes"},
    "u3": {"name": "Grace Hopper", "email": "grace@example.com", "team": "compilers"},
}
TEAMS = {"engines": "Charles Babbage", "codes": "Joan Clarke", "compilers": "Jean Sammet"}
TIME_ZONES = {"paris": "UTC+1", "tokyo": "UTC+9", "oslo": "UTC+1", "lima": "UTC-5"}
PRODUCTS = {"keyboard": 49.0, "mouse": 19.5, "monitor": 189.0, "laptop stand": 35.0}
_FLAKY_CALLS: dict[str, int] = {}


@tool
def add(a: float, b: float) -> float:
    """Add two numbers.

    Args:
        a: first number
        b: second number
    """
    return a + b


@tool
def subtract(a: float, b: float) -> float:
    """Subtract b from a.

    Args:
        a: number to subtract from
        b: number to subtract
    """
    return a - b


@tool
def multiply(a: float, b: float) -> float:
    """Multiply two numbers.

    Args:
        a: first number
        b: second number
    """
    return a * b


@tool
def divide(a: float, b: float) -> float:
    """Divide a by b.

    Args:
        a: dividend
        b: divisor (not zero)
    """
    if b == 0:
        raise ToolError("cannot divide by zero")
    return a / b


@tool
def square_root(x: float) -> float:
    """The square root of a non-negative number.

    Args:
        x: the number
    """
    if x < 0:
        raise ToolError("square_root needs a number >= 0")
    return math.sqrt(x)


@tool
def get_weather(city: str) -> str:
    """Current weather for a city: temperature in Celsius and conditions.

    Args:
        city: city name, e.g. Paris
    """
    key = city.strip().lower()
    if key not in WEATHER:
        raise ToolError(f"no weather data for {city!r}; known: {', '.join(sorted(WEATHER))}")
    temperature, conditions = WEATHER[key]
    return f"{city.title()}: {temperature} C, {conditions}"


@tool
def convert_currency(amount: float, from_currency: str, to_currency: str) -> float:
    """Convert an amount of money between USD, EUR, GBP and JPY.

    Args:
        amount: how much money
        from_currency: currency code to convert from, e.g. EUR
        to_currency: currency code to convert to, e.g. USD
    """
    source, target = from_currency.upper(), to_currency.upper()
    for code in (source, target):
        if code not in RATES_TO_USD:
            raise ToolError(f"unknown currency {code!r}; known: {', '.join(RATES_TO_USD)}")
    return round(amount * RATES_TO_USD[source] / RATES_TO_USD[target], 2)


@tool
def lookup_user(user_id: str) -> dict[str, str]:
    """Find a user by id (like u1): their name, email and team.

    Args:
        user_id: the user's id
    """
    if user_id not in USERS:
        raise ToolError(f"no user {user_id!r}")
    return USERS[user_id]


@tool
def lookup_team_lead(team: str) -> str:
    """The name of the lead of a team.

    Args:
        team: team name, e.g. engines
    """
    if team not in TEAMS:
        raise ToolError(f"no team {team!r}")
    return TEAMS[team]


@tool
def get_time_zone(city: str) -> str:
    """The time zone of a city, like UTC+1.

    Args:
        city: city name
    """
    zone = TIME_ZONES.get(city.strip().lower())
    if zone is None:
        raise ToolError(f"no time zone for {city!r}")
    return zone


@tool
def product_price(product: str) -> float:
    """The price in USD of a product in the shop catalogue.

    Args:
        product: product name, e.g. keyboard
    """
    price = PRODUCTS.get(product.strip().lower())
    if price is None:
        raise ToolError(f"no product {product!r}; catalogue: {', '.join(PRODUCTS)}")
    return price


@tool
def word_count(text: str) -> int:
    """Count the words in a text.

    Args:
        text: the text
    """
    return len(text.split())


@tool
def stock_price(ctx: ToolContext, symbol: str) -> float:
    """The latest stock price for a ticker symbol. The service is sometimes busy: retry.

    Args:
        symbol: ticker symbol, e.g. ACME
    """
    key = f"{ctx.run_id}:{symbol.upper()}"
    calls = _FLAKY_CALLS.get(key, 0) + 1
    _FLAKY_CALLS[key] = calls
    if calls == 1:
        raise ToolError("price service busy, please retry the same call")
    return {"ACME": 123.45, "GLOBEX": 67.8}.get(symbol.upper(), 10.0)
