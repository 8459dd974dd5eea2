import {
  ExpressionEvaluationError,
  ExpressionSyntaxError,
  compileExpression,
  compileTemplate,
  evaluate,
  isStaticTemplate,
  renderTemplate,
  type CompiledTemplate,
} from '@runline/engine';

const shape = (template: CompiledTemplate) =>
  template.parts.map((part) => (part.kind === 'text' ? part.text : { expression: part.expression.source }));

describe('compileTemplate', () => {
  it('given plain text, when compiled, then it is one static text part', () => {
    const template = compileTemplate('Hello there');

    expect(shape(template)).toEqual(['Hello there']);
    expect(isStaticTemplate(template)).toBe(true);
  });

  it('given text with expressions, when compiled, then text and trimmed expressions alternate', () => {
    const template = compileTemplate('Order {{ payload.orderId }} for {{payload.customer.name}}!');

    expect(shape(template)).toEqual([
      'Order ',
      { expression: 'payload.orderId' },
      ' for ',
      { expression: 'payload.customer.name' },
      '!',
    ]);
    expect(isStaticTemplate(template)).toBe(false);
  });

  it('given braces, quotes and comments inside an expression, when compiled, then the expression is kept whole', () => {
    const template = compileTemplate(`a{{ {'x': {'y': 1}}.x.y }}b{{ '}}' & "{{" }}c{{ /* }} */ 2 }}d`);

    expect(shape(template)).toEqual([
      'a',
      { expression: "{'x': {'y': 1}}.x.y" },
      'b',
      { expression: `'}}' & "{{"` },
      'c',
      { expression: '/* }} */ 2' },
      'd',
    ]);
  });

  it('given an empty template, when compiled, then it has no parts', () => {
    expect(compileTemplate('').parts).toEqual([]);
  });

  it.each([
    ['an unterminated {{', 'Hi {{ name', 'is not a valid template: unterminated "{{" at position 3'],
    ['an unterminated string inside {{ }}', "Hi {{ 'name }}", 'is not a valid template: unterminated "{{" at position 3'],
    ['an empty {{ }}', 'Hi {{  }}', 'is not a valid template: empty "{{ }}" at position 3'],
    ['a bad expression', 'Hi {{ name. }}', 'is not a valid template: {{ name. }} is not a valid expression: Unexpected end of expression (at position 5)'],
  ])('given %s, when compiled, then it throws a syntax error saying why', (_case, source, problem) => {
    expect(() => compileTemplate(source)).toThrow(new ExpressionSyntaxError(source, problem));
  });
});

describe('compileExpression', () => {
  it('given a blank expression, when compiled, then it is refused', () => {
    expect(() => compileExpression('   ')).toThrow(ExpressionSyntaxError);
  });

  it('given a syntax error, when compiled, then the jsonata message and position are kept', () => {
    expect(() => compileExpression('$sum(')).toThrow('"$sum(" is not a valid expression: Expected ")" before end of expression (at position 5)');
  });
});

describe('evaluate', () => {
  const scope = {
    payload: { orderId: 42, items: [{ price: 2 }, { price: 3 }] },
    vars: { total: 5 },
    session: { id: 's1' },
    input: { message: 'hi', userName: 'Ada' },
  };

  it('given the four scope roots, when expressions read them, then each resolves', async () => {
    await expect(evaluate(compileExpression('payload.orderId'), scope)).resolves.toBe(42);
    await expect(evaluate(compileExpression('$sum(payload.items.price)'), scope)).resolves.toBe(5);
    await expect(evaluate(compileExpression('vars.total * 2'), scope)).resolves.toBe(10);
    await expect(evaluate(compileExpression('session.id'), scope)).resolves.toBe('s1');
    await expect(evaluate(compileExpression('input.message'), scope)).resolves.toBe('hi');
  });

  it('given a path that selects nothing, when evaluated, then it is undefined', async () => {
    await expect(evaluate(compileExpression('payload.missing'), scope)).resolves.toBeUndefined();
  });

  it('given one compiled expression, when evaluated concurrently on different scopes, then no run sees another', async () => {
    const expression = compileExpression('($wait := $.payload.n; $string($$.payload.n) & "-" & $string($wait))');

    const results = await Promise.all(
      Array.from({ length: 50 }, (_, n) => evaluate(expression, { payload: { n } })),
    );

    expect(results).toEqual(Array.from({ length: 50 }, (_, n) => `${n}-${n}`));
  });

  it('given a runtime error, when evaluated, then it is an ExpressionEvaluationError with jsonata code', async () => {
    const failure = evaluate(compileExpression("$number('abc') + $substring(1)"), scope);

    await expect(failure).rejects.toBeInstanceOf(ExpressionEvaluationError);
    await expect(failure).rejects.toMatchObject({ source: "$number('abc') + $substring(1)", code: expect.any(String) });
  });

  it('given an expression building a huge sequence, when evaluated, then the sequence guard stops it', async () => {
    await expect(evaluate(compileExpression('$count([1..200000])'), {})).rejects.toMatchObject({ code: 'D2015' });
  });

  it('given unbounded recursion, when evaluated, then the depth guard stops it', async () => {
    const expression = compileExpression('($f := function($n){ $n = 0 ? 0 : 1 + $f($n - 1) }; $f(100000))');

    await expect(evaluate(expression, {})).rejects.toMatchObject({ code: 'D1011' });
  });

  it('given an endless loop, when evaluated, then the time guard stops it', async () => {
    const expression = compileExpression('($loop := function($n){ $loop($n + 1) }; $loop(0))');

    await expect(evaluate(expression, {})).rejects.toMatchObject({ code: 'D1012' });
  });
});

describe('renderTemplate', () => {
  it('given the documented chatbot flow text, when rendered, then the order id is filled in', async () => {
    await expect(renderTemplate(compileTemplate('Order {{ payload.orderId }}'), { payload: { orderId: 42 } })).resolves.toBe(
      'Order 42',
    );
  });

  it('given values of every JSON kind, when rendered, then each becomes text', async () => {
    const template = compileTemplate(
      's={{ vars.s }} n={{ vars.n }} b={{ vars.b }} o={{ vars.o }} a={{ vars.a }} null={{ vars.z }} none={{ vars.missing }}',
    );

    const text = await renderTemplate(template, { vars: { s: 'x', n: 1.5, b: false, o: { k: 1 }, a: [1, 'two'], z: null } });

    expect(text).toBe('s=x n=1.5 b=false o={"k":1} a=[1,"two"] null= none=');
  });

  it('given expressions that yield functions, when rendered, then they render as nothing', async () => {
    const template = compileTemplate('[{{ $uppercase }}][{{ function($x) { $x } }}]');

    await expect(renderTemplate(template, {})).resolves.toBe('[][]');
  });

  it('given a static template, when rendered, then it is the text as written', async () => {
    await expect(renderTemplate(compileTemplate('just text'), {})).resolves.toBe('just text');
  });
});
