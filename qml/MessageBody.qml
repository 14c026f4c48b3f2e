// A message's answer: Markdown paragraphs, and fenced code blocks in monospace with a copy
// button. The segments update in place while a reply streams.
import QtQuick
import QtQuick.Controls
import QtQuick.Layouts
import Arbor

ColumnLayout {
    id: root
    objectName: "messageBody"
    property MessageSegmentsModel segments
    property string placeholder
    spacing: 6

    Label {
        visible: root.placeholder.length > 0
        text: root.placeholder
        opacity: 0.6
    }

    Repeater {
        model: root.segments
        delegate: MessageSegment {
            Layout.fillWidth: true
        }
    }
}
