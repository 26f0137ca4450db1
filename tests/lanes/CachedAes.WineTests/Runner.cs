using System;
using System.Collections.Generic;
using System.Diagnostics;
using System.Globalization;
using System.Linq;
using System.Linq.Expressions;
using System.Reflection;
using System.Text;
using System.Threading.Tasks;
using Xunit.Abstractions;
using Xunit.Sdk;

namespace CachedCryptography.WineTests;

/// <summary>
/// Runs the xunit-style tests compiled into this assembly, the way xunit would for what they use: a new instance per
/// test case (given an <see cref="ITestOutputHelper"/> if its constructor asks), <c>[Fact]</c>, <c>[Theory]</c> rows from
/// every data attribute, <c>Skip</c>, <c>Task</c>-returning tests, <see cref="IDisposable"/>. Sequential. A test class
/// that yields no test case counts as a failure, so a broken data source cannot pass silently.
/// </summary>
internal static class Runner
{
    internal sealed record Totals(int Passed, int Failed, int Skipped);

    /// <summary>(test name, theory row) → why this case cannot run on this platform (counted as skipped), or null.</summary>
    public static Func<string, object?[], string?> PlatformSkip { get; set; } = (_, _) => null;

    /// <summary>Print every test case before it runs (to find one that hangs or crashes the process).</summary>
    public static bool Verbose { get; set; }

    public static Totals RunAll(Assembly assembly, string? filter)
    {
        int passed = 0, failed = 0, skipped = 0;
        var sehList = new TebExceptionList();
        Type[] classes = assembly.GetTypes()
            .Where(t => t.IsClass && !t.IsAbstract && t.IsPublic && TestMethods(t).Any())
            .OrderBy(t => t.FullName, StringComparer.Ordinal)
            .ToArray();

        foreach (Type type in classes)
        {
            var clock = Stopwatch.StartNew();
            int classPassed = 0, classFailed = 0, classSkipped = 0;
            foreach (MethodInfo method in TestMethods(type))
            {
                FactAttribute fact = method.GetCustomAttribute<FactAttribute>()!;
                string name = $"{type.Name}.{method.Name}";
                if (filter is not null && !filter.Split('|').Any(part => name.Contains(part, StringComparison.OrdinalIgnoreCase)))
                {
                    continue;
                }

                if (fact.Skip is not null)
                {
                    classSkipped++;
                    Console.WriteLine($"  SKIP {name}: {fact.Skip}");
                    continue;
                }

                List<object?[]> rows;
                try
                {
                    rows = Rows(method);
                }
                catch (Exception e)
                {
                    classFailed++;
                    Console.WriteLine($"  FAIL {name}: its test data could not be read: {e}");
                    continue;
                }

                if (rows.Count == 0)
                {
                    classFailed++;
                    Console.WriteLine($"  FAIL {name}: the theory has no data rows");
                    continue;
                }

                foreach (object?[] row in rows)
                {
                    string display = method.GetCustomAttribute<TheoryAttribute>() is null ? name : $"{name}({Describe(row)})";
                    if (PlatformSkip(name, row) is string reason)
                    {
                        classSkipped++;
                        Console.WriteLine($"  SKIP {display}: {reason}");
                        continue;
                    }

                    if (Verbose)
                    {
                        Console.WriteLine($"  RUN  {display}");
                    }

                    IntPtr before = sehList.Read();
                    bool ok = RunOne(type, method, row, display);
                    if (sehList.Restore(before))
                    {
                        Console.WriteLine($"  NOTE {display}: left a stale entry in the thread's SEH frame list (see {nameof(Invoker)}); removed");
                    }

                    if (ok)
                    {
                        classPassed++;
                    }
                    else
                    {
                        classFailed++;
                    }
                }
            }

            if (classPassed + classFailed + classSkipped == 0 && filter is null)
            {
                classFailed++;
                Console.WriteLine($"  FAIL {type.Name}: no test case ran");
            }

            Console.WriteLine(string.Create(CultureInfo.InvariantCulture, $"{type.FullName}: {classPassed} passed, {classFailed} failed, {classSkipped} skipped ({clock.Elapsed.TotalSeconds:0.0} s)"));
            passed += classPassed;
            failed += classFailed;
            skipped += classSkipped;
        }

        return new Totals(passed, failed, skipped);
    }

    private static IEnumerable<MethodInfo> TestMethods(Type type) =>
        type.GetMethods(BindingFlags.Public | BindingFlags.Instance | BindingFlags.Static | BindingFlags.DeclaredOnly)
            .Where(m => m.GetCustomAttribute<FactAttribute>() is not null)
            .OrderBy(m => m.MetadataToken);

    private static List<object?[]> Rows(MethodInfo method)
    {
        if (method.GetCustomAttribute<TheoryAttribute>() is null)
        {
            return [[]];
        }

        var rows = new List<object?[]>();
        foreach (DataAttribute data in method.GetCustomAttributes<DataAttribute>())
        {
            rows.AddRange(data.GetData(method));
        }

        return rows;
    }

    private static bool RunOne(Type type, MethodInfo method, object?[] row, string display)
    {
        var output = new BufferedOutput();
        object? instance = null;
        Exception? failure;
        try
        {
            ParameterInfo[] parameters = method.GetParameters();
            if (parameters.Length != row.Length)
            {
                throw new InvalidOperationException($"{row.Length} arguments for {parameters.Length} parameters.");
            }

            object?[] arguments = new object?[row.Length];
            for (int i = 0; i < row.Length; i++)
            {
                arguments[i] = Convert(row[i], parameters[i].ParameterType);
            }

            if (!method.IsStatic)
            {
                ConstructorInfo? withOutput = type.GetConstructor([typeof(ITestOutputHelper)]);
                instance = withOutput is not null ? withOutput.Invoke([output]) : Activator.CreateInstance(type);
            }

            (object? result, failure) = Invoker(method)(instance, arguments);
            if (failure is null && result is Task task)
            {
                failure = Await(task);
            }
        }
        catch (Exception e)
        {
            failure = e; // the runner's own steps (arguments, constructor)
        }
        finally
        {
            (instance as IDisposable)?.Dispose();
        }

        if (failure is null)
        {
            if (Verbose && output.Text.Length > 0)
            {
                Console.WriteLine(Indent("output: " + output.Text));
            }

            return true;
        }

        Console.WriteLine($"  FAIL {display}{Environment.NewLine}{Indent(failure.ToString())}");
        if (output.Text.Length > 0)
        {
            Console.WriteLine(Indent("output: " + output.Text));
        }

        return false;
    }

    private static Exception? Await(Task task)
    {
        try
        {
            task.GetAwaiter().GetResult();
            return null;
        }
        catch (Exception e)
        {
            return e;
        }
    }

    /// <summary>
    /// A compiled call of <paramref name="method"/> that catches what the test throws inside the compiled code itself.
    /// Under Wine 8.0, an exception that leaves a method called through reflection (<see cref="MethodBase.Invoke(object?, object?[])"/>,
    /// whose call crosses the runtime's native frames) leaves a stale entry in the thread's SEH frame list
    /// (NT_TIB.ExceptionList) pointing into dead stack; a later exception raised deeper in the stack then calls a garbage
    /// handler and recurses until the stack is exhausted: the process hangs (large stack) or crashes (small stack). A
    /// failing test must not take the rest of the run with it, so its exception never crosses a native frame here.
    /// </summary>
    private static Func<object?, object?[], (object?, Exception?)> Invoker(MethodInfo method)
    {
        ParameterExpression instance = Expression.Parameter(typeof(object), "instance");
        ParameterExpression arguments = Expression.Parameter(typeof(object?[]), "arguments");
        ParameterExpression caught = Expression.Parameter(typeof(Exception), "caught");
        Expression[] parameters = method.GetParameters()
            .Select((p, i) => (Expression)Expression.Convert(Expression.ArrayIndex(arguments, Expression.Constant(i)), p.ParameterType))
            .ToArray();
        Expression call = Expression.Call(method.IsStatic ? null : Expression.Convert(instance, method.DeclaringType!), method, parameters);
        Type resultType = typeof((object?, Exception?));
        ConstructorInfo make = resultType.GetConstructor([typeof(object), typeof(Exception)])!;
        Expression success = method.ReturnType == typeof(void)
            ? Expression.Block(call, Expression.New(make, Expression.Constant(null), Expression.Constant(null, typeof(Exception))))
            : Expression.New(make, Expression.Convert(call, typeof(object)), Expression.Constant(null, typeof(Exception)));
        Expression body = Expression.TryCatch(success, Expression.Catch(caught, Expression.New(make, Expression.Constant(null), caught)));
        return Expression.Lambda<Func<object?, object?[], (object?, Exception?)>>(body, instance, arguments).Compile();
    }

    private static object? Convert(object? value, Type target)
    {
        if (value is null || target.IsInstanceOfType(value))
        {
            return value;
        }

        Type underlying = Nullable.GetUnderlyingType(target) ?? target;
        if (underlying.IsEnum)
        {
            return Enum.ToObject(underlying, value);
        }

        return System.Convert.ChangeType(value, underlying, CultureInfo.InvariantCulture);
    }

    private static string Describe(object?[] row) => string.Join(", ", row.Select(value => value switch
    {
        null => "null",
        string s => $"\"{s}\"",
        Array a => $"{a.GetType().GetElementType()!.Name}[{a.Length}]",
        _ => System.Convert.ToString(value, CultureInfo.InvariantCulture),
    }));

    private static string Indent(string text) => "      " + text.Replace("\n", "\n      ", StringComparison.Ordinal);

    private sealed class BufferedOutput : ITestOutputHelper
    {
        private readonly StringBuilder _text = new();

        public string Text => _text.ToString();

        public void WriteLine(string message) => _text.AppendLine(message);

        public void WriteLine(string format, params object[] args) => _text.AppendLine(string.Format(CultureInfo.InvariantCulture, format, args));
    }
}
