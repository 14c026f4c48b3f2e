// One piece of a message: a paragraph of Markdown prose (selectable), or a code block.
import QtQuick
import QtQuick.Controls

Control {
    id: root
    required property string segmentKind
    required property string segmentBody
    required property string segmentLanguage
    required property bool segmentPlain
    readonly property bool isCode: segmentKind === "code"
    implicitHeight: isCode ? code.implicitHeight : prose.implicitHeight
    implicitWidth: 200
    padding: 0

    TextEdit {
        id: prose
        objectName: "proseText"
        width: root.width
        visible: !root.isCode
        readOnly: true
        selectByMouse: true
        wrapMode: TextEdit.Wrap
        textFormat: root.segmentPlain ? TextEdit.PlainText : TextEdit.MarkdownText
        text: root.isCode ? "" : root.segmentBody
        color: root.palette.text
        selectionColor: root.palette.highlight
        selectedTextColor: root.palette.highlightedText
        onLinkActivated: (link) => Qt.openUrlExternally(link)
        Accessible.role: Accessible.StaticText
        Accessible.name: text
    }
    // Code blocks are made only for code segments (most segments are prose).
    Loader {
        id: code
        width: root.width
        active: root.isCode
        visible: root.isCode
        sourceComponent: codeBlock
    }
    Component {
        id: codeBlock
        CodeBlock {}
    }
    Binding {
        target: code.item
        property: "code"
        value: root.segmentBody
        when: code.item !== null
    }
    Binding {
        target: code.item
        property: "language"
        value: root.segmentLanguage
        when: code.item !== null
    }
}
