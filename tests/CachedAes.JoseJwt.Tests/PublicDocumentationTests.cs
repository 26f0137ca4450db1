using CachedCryptography.Tests;

namespace CachedCryptography.JoseJwt.Tests;

/// <summary>The CachedAes.JoseJwt package's XML documentation holds only its public surface (see <see cref="PublicDocumentation"/>).</summary>
public sealed class PublicDocumentationTests
{
    [Fact]
    public void The_documentation_file_documents_only_what_a_consumer_can_reach() =>
        PublicDocumentation.AssertPublicOnly(typeof(CachedAesKeyWrapManagement).Assembly);
}
